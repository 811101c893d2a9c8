"""The word splitter cuts words as spaCy's English tokenizer does (datatrove's words; every
expected list below is what ``spacy.blank("en")`` gives), and recognises scripts without spaces
by language code and by their characters."""

from __future__ import annotations

import pyarrow as pa
import pytest

from contentx_udf.text.words import no_space_script, split_words


def words_of(text: str) -> list[str]:
    split = split_words([text])
    vocabulary = split.vocabulary.to_pylist()
    return [vocabulary[i] for i in split.ids[split.offsets[0] : split.offsets[1]]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, world!", ["Hello", ",", "world", "!"]),
        ("It's a well-known fact.", ["It", "'s", "a", "well", "-", "known", "fact", "."]),
        ("I don't think they can't.", ["I", "do", "n't", "think", "they", "ca", "n't", "."]),
        ("I’m sure you’ll see.", ["I", "’m", "sure", "you", "’ll", "see", "."]),
        ("Mr. Smith met Dr. Jones", ["Mr.", "Smith", "met", "Dr.", "Jones"]),
        ("Made in the U.S. e.g. here", ["Made", "in", "the", "U.S.", "e.g.", "here"]),
        ("Send it to J. Doe.", ["Send", "it", "to", "J.", "Doe", "."]),
        ("(see above) [1] {x}", ["(", "see", "above", ")", "[", "1", "]", "{", "x", "}"]),
        ('"Quoted," she said...', ['"', "Quoted", ",", '"', "she", "said", "..."]),
        ("Price: $10.99 or 3.5% off", ["Price", ":", "$", "10.99", "or", "3.5", "%", "off"]),
        (
            "Run 10km at 12:30 on 2024-01-05",
            ["Run", "10", "km", "at", "12:30", "on", "2024", "-", "01", "-", "05"],
        ),
        ("COVID-19 and 1,000 people", ["COVID-19", "and", "1,000", "people"]),
        ("Visit https://example.com/a-b?x=1.", ["Visit", "https://example.com/a-b?x=1", "."]),
        ("Mail john.doe@example.com now", ["Mail", "john.doe@example.com", "now"]),
        ("O'Neill and rock'n'roll", ["O'Neill", "and", "rock'n'roll"]),
        ("cannot gonna", ["can", "not", "gon", "na"]),
        ("a—b and x/y", ["a", "—", "b", "and", "x", "/", "y"]),
        ("Smith. USA. etc.", ["Smith", ".", "USA", ".", "etc", "."]),
        ("Wow!!! Really?!", ["Wow", "!", "!", "!", "Really", "?", "!"]),
        ("Great (8) items :)", ["Great", "(", "8)", "items", ":)"]),  # spaCy's emoticons
        ("v1.2.3.4 released", ["v1.2.3.4", "released"]),
    ],
)
def test_words_are_spacy_english_tokens(text, expected):
    assert words_of(text) == expected


def test_whitespace_of_every_kind_separates_words_and_never_is_a_word():
    text = "one\ttwo\u00a0three\u3000four  five\u2028six"
    assert words_of(text) == ["one", "two", "three", "four", "five", "six"]
    assert split_words([text]).chunk_counts.tolist() == [len(text.split())]


def test_batch_offsets_and_shared_ids():
    texts = ["the cat sat", "", "   ", "the dog, the cat."]
    split = split_words(texts)
    assert split.counts.tolist() == [3, 0, 0, 6]
    assert split.chunk_counts.tolist() == [3, 0, 0, 4]
    ids = split.ids
    vocabulary = split.vocabulary.to_pylist()
    # equal words have equal ids across texts
    assert vocabulary[ids[0]] == "the" and ids[0] == ids[3] == ids[6]
    assert vocabulary[ids[1]] == "cat" and ids[1] == ids[7]


def test_word_properties():
    split = split_words(["Hello , 123 ... é"])
    vocabulary = split.vocabulary.to_pylist()
    words = [vocabulary[i] for i in split.ids]
    assert words == ["Hello", ",", "123", "...", "é"]
    assert split.lengths.tolist() == [5, 1, 3, 3, 1]
    assert split.is_symbol.tolist() == [False, True, False, True, False]
    assert split.has_letter.tolist() == [True, False, False, False, True]
    assert split.vocabulary_index(["...", "Hello"]).tolist() == [1, -1, -1, 0, -1]


def test_long_chunk_is_split_in_linear_time():
    text = ("x" * 200_000 + "-") * 5 + " end."
    assert words_of(text)[-2:] == ["end", "."]


CHINESE = "市议会周二在经过长时间辩论后批准了新预算，争论的焦点是公共交通的费用以及河上旧桥的维修。"
JAPANESE = (
    "市議会は火曜日、公共交通の費用と川に架かる古い橋の修理をめぐる長い議論の末、新しい予算を承認した。"
)
THAI = "สภาเมืองอนุมัติงบประมาณใหม่เมื่อวันอังคารหลังจากการถกเถียงกันเป็นเวลานานเรื่องค่าขนส่งสาธารณะ"
ENGLISH = "The council approved the new budget on Tuesday after a long debate about public transport."


def test_scripts_without_spaces_are_recognised_by_their_characters():
    texts = [CHINESE, JAPANESE, THAI, ENGLISH, "Menu 首页 Home About Contact us Login Register Help"]
    assert no_space_script(pa.array(texts)).tolist() == [True, True, True, False, False]


def test_scripts_without_spaces_are_recognised_by_language_code():
    texts = pa.array(["(romanised text)", "(romanised text)", "(romanised text)"])
    assert no_space_script(texts, pa.array(["zh", "en", None])).tolist() == [True, False, False]
