"""FineWeb's rules at their thresholds, just over and just under, each alone."""

from __future__ import annotations

import pytest

from contentx_udf.corpus.quality.settings import FINEWEB

from .helpers import fillers, fineweb, only

LONG = "a line of text that is longer than thirty characters"


@pytest.mark.parametrize(("ending", "expected"), [(11, "min_line_punct_ratio"), (12, None), (13, None)])
def test_lines_ending_in_punctuation(ending, expected):
    marks = [".", "!", "?", "。", "؟"]
    lines = [f"{LONG} {w}{marks[i % 5]}" for i, w in enumerate(fillers(ending))]
    lines += [f"{LONG} {w}" for w in fillers(100 - ending, start=500)]
    assert fineweb(["\n".join(lines)], only(FINEWEB, min_line_punct_ratio=0.12)) == [expected]


def test_no_line_ending_in_punctuation_can_be_excused():
    text = "\n".join(f"{LONG} {w}" for w in fillers(10))
    s = only(FINEWEB, min_line_punct_ratio=0.12)
    assert fineweb([text], s) == ["min_line_punct_ratio"]
    assert fineweb([text], only(FINEWEB, min_line_punct_ratio=0.12, line_punct_exclude_zero=True)) == [None]


def test_a_mark_followed_by_a_space_does_not_end_the_line():
    text = "\n".join([f"{LONG} {w}. " for w in fillers(10)])
    assert fineweb([text], only(FINEWEB, min_line_punct_ratio=0.12)) == ["min_line_punct_ratio"]


@pytest.mark.parametrize(("short", "expected"), [(66, None), (67, None), (68, "max_short_line_ratio")])
def test_short_lines(short, expected):
    lines = [f"short line {w} " + "x" * 13 for w in fillers(short)]  # exactly 30 characters
    assert all(len(line) == 30 for line in lines)
    lines += [f"{LONG} {w}" for w in fillers(100 - short, start=500)]
    assert fineweb(["\n".join(lines)], only(FINEWEB, max_short_line_ratio=0.67)) == [expected]


def test_blank_lines_are_not_lines():
    lines = [f"{LONG} {w}." for w in fillers(10)]
    assert fineweb(["\n\n  \n".join(lines)], only(FINEWEB, max_short_line_ratio=0.67)) == [None]
    assert fineweb([" \n\t\n"]) == ["empty"]


@pytest.mark.parametrize(("pad", "expected"), [(-1, "max_dup_line_char_ratio"), (0, None), (1, None)])
def test_duplicated_line_characters(pad, expected):
    repeated = "r" * 10
    # 1000 characters besides the newlines, 10 of them in the repeated copy: exactly 1 %
    rest = [f"{w} " + "f" * 94 for w in fillers(9)]  # 9 lines of 100 characters
    text = "\n".join([repeated, repeated, *rest, "g" * (80 + pad)])
    assert fineweb([text], only(FINEWEB, max_dup_line_char_ratio=0.01)) == [expected]


@pytest.mark.parametrize(("words", "expected"), [(29, "max_newline_word_ratio"), (30, None), (31, None)])
def test_newlines_per_word(words, expected):
    # 10 lines, 9 newlines; the words (punctuation included) spread over them
    tokens = [f"{w}" for w in fillers(words - 10)] + ["."] * 10
    lines = [" ".join(tokens[i::10]) for i in range(10)]
    assert fineweb(["\n".join(lines)], only(FINEWEB, max_newline_word_ratio=0.3)) == [expected]


def test_chinese_skips_the_newline_rule():
    text = "今天下雨了。\n我们待在家里。\n猫在那里睡觉。\n狗大声地叫。"
    assert fineweb([text], only(FINEWEB, max_newline_word_ratio=0.3)) == [None]
    assert fineweb([text], only(FINEWEB, max_newline_word_ratio=0.3), detect_no_space=False) == [
        "max_newline_word_ratio"
    ]
