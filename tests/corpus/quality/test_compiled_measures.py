"""The compiled passes of the ``--signals`` measures (:mod:`contentx_udf.corpus._lines`) give the
counts of their numpy and Python fallbacks: C4's sentences and Gopher repetition's greedy count."""

import dataclasses
import random

import numpy as np
import pytest

from contentx_udf.corpus.quality import c4, gopher
from contentx_udf.corpus.quality.settings import Settings
from contentx_udf.corpus.quality.text import TextBatch
from contentx_udf.text.words import split_words

pytestmark = pytest.mark.skipif(
    c4._COMPILED_SENTENCES is None or gopher._COMPILED_GREEDY is None, reason="extension not built"
)

TOKENS = [
    "a",
    "word",
    ".",
    "!",
    "?",
    ",",
    ";",
    "-",
    "...",
    "?!",
    "。",
    "Hello",
    "x.",
    "(",
    ")",
    '"',
    "…",
    "e.g.",
]


def _texts(rng: random.Random, lines: int) -> list[str]:
    return [" ".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 30))) for _ in range(lines)]


def test_sentences_compiled_equal_numpy(monkeypatch):
    rng = random.Random(3)
    for _ in range(50):
        words = split_words(_texts(rng, rng.randint(1, 40)))
        some = np.array(
            sorted(rng.sample(range(len(words.offsets) - 1), rng.randint(1, len(words.offsets) - 1)))
        )
        compiled = c4._sentences(words), c4._sentences(words, some)
        monkeypatch.setattr(c4, "_COMPILED_SENTENCES", None)
        numpy = c4._sentences(words), c4._sentences(words, some)
        monkeypatch.undo()
        assert np.array_equal(compiled[0], numpy[0]) and np.array_equal(compiled[1], numpy[1])
        assert np.array_equal(compiled[0][some], compiled[1])


@pytest.mark.parametrize("full", [False, True])
def test_greedy_repeats_compiled_equal_python(monkeypatch, full):
    rng = random.Random(5)
    vocabulary = ["the cat", "sat", "on", "the mat", "and", "so", "it", "went"]
    texts = [
        "\n".join(
            " ".join(rng.choice(vocabulary[: rng.randint(2, 8)]) for _ in range(rng.randint(0, 12)))
            for _ in range(6)
        )
        for _ in range(80)
    ]
    # the line, paragraph and top n-gram rules off: the n-gram scans decide (with their limits)
    off = ["dup_para_frac", "dup_para_char_frac", "dup_line_frac", "dup_line_char_frac"]
    off += [f"top_{n}_gram_frac" for n in (2, 3, 4)]
    section = dataclasses.replace(Settings().gopher_repetition, **dict.fromkeys(off))

    def measures():
        batch = TextBatch(texts)
        v = gopher.GopherRepetition(section).evaluate(batch, np.ones(len(texts), bool), full)
        return v.codes.copy(), {k: np.asarray(m).copy() for k, m in v.measures.items()}

    compiled = measures()
    assert (compiled[0] > 0).any() and not (compiled[0] > 0).all()
    monkeypatch.setattr(gopher, "_COMPILED_GREEDY", None)
    python = measures()
    assert np.array_equal(compiled[0], python[0])
    assert compiled[1].keys() == python[1].keys()
    for key in compiled[1]:
        assert np.array_equal(compiled[1][key], python[1][key]), key
