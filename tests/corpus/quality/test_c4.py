"""C4's line edits (the kept lines are the new text) and page rules, FineWeb's settings (no
terminal-punctuation rule) unless a test says otherwise."""

from __future__ import annotations

import dataclasses

import pytest

from contentx_udf.corpus.quality.settings import C4

from .helpers import c4

FINEWEB_C4 = dataclasses.replace(C4, terminal_punctuation=False)
FIVE = "It rains today.\nWe stay inside.\nThe cat sleeps there.\nThe dog barks loudly.\nWe read a book."


def test_lines_are_removed_and_citations_cleared():
    text = "\n".join(
        [
            "Short line.",
            "Enable JavaScript to view this page.",
            "This site uses cookies to improve things.",
            "Read our Privacy Policy for the details.",
            "  A fact that is cited here[1].  ",
            "Another fact [citation needed] stands here.",
            "Edit this section [edit] of the page.",
            "Some sentence number one here.",
            "Some sentence number two here.",
        ]
    )
    rules, texts, result = c4([text], FINEWEB_C4)
    assert rules == [None]
    assert texts == [
        "A fact that is cited here.\n"
        "Another fact  stands here.\n"
        "Edit this section  of the page.\n"
        "Some sentence number one here.\n"
        "Some sentence number two here."
    ]
    assert result.lines_removed.tolist() == [4]


def test_a_word_over_1000_characters_removes_its_line():
    long_line = "a " + "x" * 1001 + " b c."
    ok_line = "a " + "x" * 1000 + " b c."
    _, texts, _ = c4([FIVE + "\n" + long_line + "\n" + ok_line], FINEWEB_C4)
    assert texts == [FIVE + "\n" + ok_line]


def test_lorem_ipsum_drops_the_page_unless_its_line_was_removed_first():
    assert c4([FIVE + "\nLorem ipsum dolor sit amet."], FINEWEB_C4)[0] == ["lorem_ipsum"]
    assert c4([FIVE + "\nLOREM IPSUM"], FINEWEB_C4)[0] == [None]  # two words: the line goes first


def test_curly_bracket_drops_the_page_unless_its_line_was_removed_first():
    assert c4([FIVE + "\nfunction f() { return 1; }"], FINEWEB_C4)[0] == ["curly_bracket"]
    assert c4([FIVE + "\nvar x = {}; // javascript code"], FINEWEB_C4)[0] == [None]
    assert c4([FIVE + "\n{ }"], FINEWEB_C4)[0] == [None]


def test_the_first_offending_line_names_the_page_rule():
    assert c4([FIVE + "\nwith { curly } here\nlorem ipsum dolor sit"], FINEWEB_C4)[0] == ["curly_bracket"]
    assert c4([FIVE + "\nlorem ipsum dolor sit\nwith { curly } here"], FINEWEB_C4)[0] == ["lorem_ipsum"]


def test_sentences_are_counted_in_the_kept_lines():
    four = "\n".join(FIVE.split("\n")[:4])
    assert c4([FIVE, four], FINEWEB_C4)[0] == [None, "min_sentences"]
    one_line = "It rains. It pours! We stay? We read. We sleep."
    assert c4([one_line, one_line.rsplit(" We", 1)[0]], FINEWEB_C4)[0] == [None, "min_sentences"]
    # as spaCy's sentencizer counts (checked with datatrove's split_into_sentences): abbreviations
    # end no sentence, "..." is no sentence mark, a bracket after a period stays with its sentence
    four = "Mr. Smith went e.g. home. Then he slept. And ate. And read."
    five = "Wow!!! Really?! Yes... ok. (Fine.) Done"
    assert c4([four, five, four + " More"], FINEWEB_C4)[0] == ["min_sentences", None, None]
    assert c4(["Short.", ""], FINEWEB_C4)[0] == ["min_sentences", "min_sentences"]


def test_terminal_punctuation_rule_of_c4_itself():
    text = FIVE + '\nno final mark here at all\nends in an ellipsis...\nquoted end here "so"\''
    assert c4([text], C4)[1] == [FIVE + '\nquoted end here "so"\'']
    assert c4([text], FINEWEB_C4)[1] == [text]


def test_switches_turn_line_rules_off():
    text = FIVE + "\nEnable JavaScript please now.\nWe use cookies here.\nA fact[2] here."
    off = dataclasses.replace(FINEWEB_C4, javascript_lines=False, policy_lines=False, citations=False)
    assert c4([text], off)[1] == [text]


def test_chinese_lines_are_not_removed_for_having_one_word():
    text = "今天下雨了。\n我们待在家里。\n猫在那里睡觉。\n狗大声地叫。\n我们读了一本书。"
    rules, texts, _ = c4([text], FINEWEB_C4)
    assert rules == [None] and texts == [text]
    assert c4([text], FINEWEB_C4, detect_no_space=False)[0] == ["min_sentences"]


@pytest.mark.parametrize("text", ["", "  ", "\n\n", "!!!", "word"])
def test_degenerate_texts_get_a_verdict(text):
    assert c4([text], FINEWEB_C4)[0] == ["min_sentences"]
