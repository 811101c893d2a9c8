"""Gopher quality and repetition: every rule on texts built to sit exactly at its threshold (kept),
one step over it (dropped) and one step under it (kept), with the other rules switched off."""

from __future__ import annotations

import random

import pytest

from contentx_udf.corpus.quality.settings import GOPHER_QUALITY, GOPHER_REPETITION

from .helpers import fillers, only, quality, repetition

# --- Gopher quality ---------------------------------------------------------------------------


def prose(n_words: int) -> str:
    """``n_words`` words, two of them stop words."""
    return " ".join(["the", "and"] + ["word"] * (n_words - 2))


def test_word_count_bounds():
    s = only(GOPHER_QUALITY, min_words=50, max_words=100_000)
    assert quality([prose(49), prose(50), prose(51)], s) == ["min_words", None, None]
    assert quality([prose(100_000), prose(100_001)], s) == [None, "max_words"]


def test_word_count_ignores_punctuation_words():
    s = only(GOPHER_QUALITY, min_words=50)
    text = " , ".join(["the", "and"] + ["word"] * 47) + " ."  # 49 words and 49 marks
    assert quality([text, text + " end"], s) == ["min_words", None]


def test_mean_word_length_bounds():
    s = only(GOPHER_QUALITY, min_mean_word_length=3, max_mean_word_length=10)
    assert quality(["cat " * 59 + "at", "cat " * 60, "cats " * 59 + "at"], s) == [
        "min_mean_word_length",
        None,
        None,
    ]
    ten, eleven, nine = "abcdefghij", "abcdefghijk", "abcdefghi"
    assert quality([f"{ten} " * 59 + eleven, f"{ten} " * 60, f"{ten} " * 59 + nine], s) == [
        "max_mean_word_length",
        None,
        None,
    ]


def test_punctuation_does_not_shorten_the_mean_word():
    s = only(GOPHER_QUALITY, min_mean_word_length=3)
    assert quality(["cat , cat . cat ; cat !"], s) == [None]


@pytest.mark.parametrize(("count", "expected"), [(9, None), (10, None), (11, "max_hash_word_ratio")])
def test_hash_per_word(count, expected):
    # "ab#cd" is one word holding a '#': count '#' over 100 words
    text = " ".join(["ab#cd"] * count + ["word"] * (100 - count))
    assert quality([text], only(GOPHER_QUALITY, max_hash_word_ratio=0.1)) == [expected]


@pytest.mark.parametrize(("count", "expected"), [(9, None), (10, None), (11, "max_ellipsis_word_ratio")])
def test_ellipsis_per_word(count, expected):
    # each ellipsis is a word of its own: count of 100 words
    marks = ["…", "..."] * count
    text = " ".join(marks[:count] + ["word"] * (100 - count))
    assert quality([text], only(GOPHER_QUALITY, max_ellipsis_word_ratio=0.1)) == [expected]


@pytest.mark.parametrize(("bullets", "expected"), [(89, None), (90, None), (91, "max_bullet_lines_ratio")])
def test_bullet_lines(bullets, expected):
    lines = ["  - a bullet item" if i % 2 else "• a bullet item" for i in range(bullets)]
    lines += ["a plain line of text"] * (100 - bullets)
    assert quality(["\n".join(lines) + "\n"], only(GOPHER_QUALITY, max_bullet_lines_ratio=0.9)) == [expected]


@pytest.mark.parametrize(("ending", "expected"), [(2, None), (3, None), (4, "max_ellipsis_lines_ratio")])
def test_lines_ending_in_an_ellipsis(ending, expected):
    lines = ["and so it goes... ", "and so on…"] * 5
    lines = lines[:ending] + ["a plain line."] * (10 - ending)
    assert quality(["\n".join(lines)], only(GOPHER_QUALITY, max_ellipsis_lines_ratio=0.3)) == [expected]


@pytest.mark.parametrize(("numbers", "expected"), [(19, None), (20, None), (21, "min_alpha_words_ratio")])
def test_words_with_a_letter(numbers, expected):
    text = " ".join(["word"] * (100 - numbers) + ["123"] * numbers)
    assert quality([text], only(GOPHER_QUALITY, min_alpha_words_ratio=0.8)) == [expected]


def test_punctuation_counts_as_words_without_a_letter():
    s = only(GOPHER_QUALITY, min_alpha_words_ratio=0.8)
    eight_of_ten = "word . word . " + "word " * 6  # 8 words with a letter, 2 marks
    eight_of_eleven = "word . word . word . " + "word " * 5
    assert quality([eight_of_ten, eight_of_eleven], s) == [None, "min_alpha_words_ratio"]


def test_stop_words():
    s = only(GOPHER_QUALITY, min_stop_words=2)
    filler = " words" * 60
    texts = ["the and" + filler, "the the the" + filler, "The And" + filler, "of" + filler + " with"]
    assert quality(texts, s) == [None, "min_stop_words", "min_stop_words", None]


def test_stop_words_per_language():
    s = only(GOPHER_QUALITY, min_stop_words=2)
    german = "Der Rat hat den Haushalt beschlossen und die Kosten gesenkt " * 6
    # German has no built-in list: the rule is skipped; with a list it applies
    assert quality([german, german], s, languages=["de", "en"]) == [None, "min_stop_words"]
    with_list = type(s)(**{**s.__dict__, "stop_words": (("de", ("der", "die", "und", "den")),)})
    assert quality([german], with_list, languages=["de"]) == [None]
    assert quality(["Der Rat " * 30], with_list, languages=["de"]) == ["min_stop_words"]


def test_rules_run_in_datatrove_order():
    # too short and without stop words: the first rule (min_words) is reported
    assert quality(["word " * 10]) == ["min_words"]
    assert quality([prose(60) + " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17"]) == ["min_alpha_words_ratio"]


@pytest.mark.parametrize("text", ["", "   \n  ", "...!!!", "word", "#"])
def test_degenerate_texts_get_a_verdict(text):
    assert quality([text]) == ["min_words"]


CHINESE = (
    "市议会周二在经过长时间辩论后批准了新预算。争论的焦点是公共交通的费用以及河上旧桥的维修。"
    "议员们表示，新的预算将优先考虑学校和医院的建设。\n市长在会后对记者说，这是一个艰难但必要的决定。"
)
THAI = "สภาเมืองอนุมัติงบประมาณใหม่เมื่อวันอังคาร หลังจากการถกเถียงกันเป็นเวลานานเรื่องค่าขนส่งสาธารณะ"


def test_chinese_and_thai_skip_the_word_rules():
    assert quality([CHINESE, THAI]) == [None, None]
    # the same texts with the word rules applied (as datatrove's English filter does) fail them
    assert quality([CHINESE, THAI], detect_no_space=False) == ["min_words", "min_words"]


# --- Gopher repetition ------------------------------------------------------------------------


@pytest.mark.parametrize(("copies", "expected"), [(29, None), (30, None), (31, "dup_line_frac")])
def test_duplicate_lines_by_count(copies, expected):
    # 100 lines: one line and `copies` copies of it, the others unique
    lines = [f"line {w} of text" for w in fillers(99 - copies)] + ["the same line"] * (copies + 1)
    assert repetition(["\n".join(lines)], only(GOPHER_REPETITION, dup_line_frac=0.3)) == [expected]


@pytest.mark.parametrize(("copies", "expected"), [(29, None), (30, None), (31, "dup_para_frac")])
def test_duplicate_paragraphs_by_count(copies, expected):
    paragraphs = [f"paragraph {w}\nof text" for w in fillers(99 - copies)] + ["same\npara"] * (copies + 1)
    s = only(GOPHER_REPETITION, dup_para_frac=0.3)
    assert repetition(["\n\n".join(paragraphs)], s) == [expected]


@pytest.mark.parametrize(("pad", "expected"), [(-1, "dup_line_char_frac"), (0, None), (1, None)])
def test_duplicate_line_characters(pad, expected):
    repeated = "r" * 20
    # text = R \n R \n F with len(F) = 3 * 20 - 2: the repeat is exactly 20 % of the characters
    text = f"{repeated}\n{repeated}\n" + "f" * (58 + pad)
    assert repetition([text], only(GOPHER_REPETITION, dup_line_char_frac=0.2)) == [expected]


@pytest.mark.parametrize(("pad", "expected"), [(-1, "dup_para_char_frac"), (0, None), (1, None)])
def test_duplicate_paragraph_characters(pad, expected):
    repeated = "r" * 20
    text = f"{repeated}\n\n{repeated}\n\n" + "f" * (56 + pad)
    assert repetition([text], only(GOPHER_REPETITION, dup_para_char_frac=0.2)) == [expected]


def text_of_length(units: list[str], length: int) -> str:
    """``units`` joined by spaces, the last one padded with 'z' to make the text ``length`` long."""
    text = " ".join(units)
    assert len(text) <= length
    return text + "z" * (length - len(text))


@pytest.mark.parametrize(
    ("n", "gram", "count", "frac"),
    [(2, "ab cd", 4, 0.20), (3, "ab cd ef", 9, 0.18), (4, "ab cd ef gh", 4, 0.16)],
)
@pytest.mark.parametrize(("delta", "expected"), [(-1, True), (0, False), (1, False)])
def test_top_ngram_characters(n, gram, count, frac, delta, expected):
    # the n-gram (its words joined by spaces) times its count is `frac` of a text of `length`
    length = round(len(gram) * count / frac)
    units = [f"{gram} {w}" for w in fillers(count, 3)]
    text = text_of_length(units, length + delta)
    s = only(GOPHER_REPETITION, **{f"top_{n}_gram_frac": frac})
    assert repetition([text], s) == [f"top_{n}_gram_frac" if expected else None]


def test_top_ngram_ties_go_to_the_first_seen():
    # "ab cd" and "abcdefghij klmnopqrst" both occur twice; the first seen is the short one
    text = "ab cd x1 ab cd x2 abcdefghij klmnopqrst y1 abcdefghij klmnopqrst " + "pad" * 10
    s = only(GOPHER_REPETITION, top_2_gram_frac=0.2)
    assert repetition([text], s) == [None]
    text = "abcdefghij klmnopqrst y1 abcdefghij klmnopqrst ab cd x1 ab cd x2 " + "pad" * 10
    assert repetition([text], s) == ["top_2_gram_frac"]


def test_a_short_text_is_its_own_top_ngram():
    # datatrove: the most common 2-gram of "hello world" is itself, 11 of 11 characters
    assert repetition(["hello world"]) == ["top_2_gram_frac"]
    assert repetition(["hello"]) == [None]  # fewer than 2 words: no n-gram, nothing to count


def reference_repeated_chars(words: list[str], n: int) -> int:
    """datatrove's ``find_all_duplicate``, written out: scan from the start; an n-gram seen before
    counts its characters (words joined without spaces) and the scan jumps over it."""
    seen, repeated, i = set(), 0, 0
    while i < len(words) - n + 1:
        gram = "".join(words[i : i + n])
        if gram in seen:
            repeated += len(gram)
            i += n
        else:
            seen.add(gram)
            i += 1
    return repeated


@pytest.mark.parametrize(("delta", "expected"), [(-1, "dup_5_gram_frac"), (0, None), (1, None)])
def test_duplicated_5grams(delta, expected):
    gram = "aaa bbb ccc ddd eee"  # 15 characters without spaces: one repeat is 15 % of 100
    text = text_of_length([gram, *fillers(3), gram, *fillers(3, start=3)], 100 + delta)
    assert repetition([text], only(GOPHER_REPETITION, dup_5_gram_frac=0.15)) == [expected]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("n", [5, 7, 10])
def test_duplicated_ngrams_are_counted_greedily_like_datatrove(seed, n):
    rng = random.Random(seed)
    vocabulary = fillers(6, 2)
    # runs of a few words, some copied again later, with overlaps: the greedy count differs from
    # the union of all repeats here
    words = []
    while len(words) < 300:
        if words and rng.random() < 0.5:
            start = rng.randrange(len(words))
            words += words[start : start + rng.randint(3, 15)]
        else:
            words += rng.choices(vocabulary, k=rng.randint(1, 8))
    text = " ".join(words)
    share = reference_repeated_chars(words, n) / len(text)
    key = f"dup_{n}_gram_frac"
    assert repetition([text], only(GOPHER_REPETITION, **{key: share})) == [None]
    assert repetition([text], only(GOPHER_REPETITION, **{key: share * 0.999})) == [key]


def test_repetition_of_many_texts_at_once_matches_one_by_one():
    rng = random.Random(7)
    texts = []
    for i in range(40):
        words = rng.choices(fillers(8 + i % 20, 3), k=rng.randint(1, 400))
        lines = [" ".join(words[j : j + 9]) for j in range(0, len(words), 9)]
        texts.append("\n".join(lines) + ("\n\n" + lines[0] if i % 3 == 0 else ""))
    assert repetition(texts) == [repetition([t])[0] for t in texts]


def test_chinese_skips_the_ngram_rules_but_not_the_line_rules():
    assert repetition([CHINESE]) == [None]
    assert repetition([CHINESE, CHINESE + "\n" + CHINESE + "\n" + CHINESE]) == [None, "dup_line_frac"]
