"""Texts and a tiny fastText quality model for the tests of ``--quality-model`` (trained here: no
model can be downloaded).  A text is sentences of words drawn from a "high-quality" vocabulary with
probability ``p`` and from a "low-quality" one otherwise, so a model trained on p = 0.8 against
p = 0.2 gives scores spread over [0, 1]."""

from __future__ import annotations

import random
from pathlib import Path

HQ = (
    "theorem proof lemma equation energy molecule protein galaxy experiment hypothesis analysis "
    "evidence study measurement river climate history library research method"
).split()
LQ = "click buy cheap free offer deal win casino bonus subscribe login cart sale discount now".split()


def quality_text(rng: random.Random, p: float) -> str:
    """A few lines of sentences, each word high-quality with probability ``p``."""
    sentences = []
    for _ in range(rng.randint(3, 12)):
        words = [rng.choice(HQ) if rng.random() < p else rng.choice(LQ) for _ in range(rng.randint(6, 14))]
        sentences.append(" ".join(words).capitalize() + ".")
    return "\n".join(sentences)


def train_model(path: Path, seed: int = 1, **options) -> Path:
    """A word-bigram softmax model (labels ``__label__hq`` and ``__label__cc``, DCLM's) at ``path``,
    trained by ``fasttext-new`` (the quality extra's trainer)."""
    import pytest

    trainer = pytest.importorskip("fasttext_new", reason="fasttext-new (the quality extra) not installed")
    rng = random.Random(seed)
    lines = []
    for _ in range(300):
        lines.append("__label__hq " + " ".join(quality_text(rng, 0.8).split()))
        lines.append("__label__cc " + " ".join(quality_text(rng, 0.2).split()))
    data = path.with_suffix(".train.txt")
    data.write_text("\n".join(lines) + "\n")
    settings = {"dim": 8, "epoch": 5, "wordNgrams": 2, "bucket": 20_000, "thread": 1, "seed": seed}
    model = trainer.train_supervised(str(data), verbose=0, **{**settings, **options})
    model.save_model(str(path))
    return path


def fasttext_scores(path: Path, texts: list[str], label: str = "__label__hq") -> list[float]:
    """fastText's own probability of ``label`` for each text, prepared as DCLM prepares it (the C++
    of ``fasttext-predict``, one string at a time)."""
    import pytest

    fasttext = pytest.importorskip("fasttext", reason="fastText's predict (fasttext-predict) not installed")

    model = fasttext.load_model(str(path))
    out = []
    for text in texts:
        labels, probs = model.predict(" ".join(text.strip().splitlines()), k=-1, threshold=0.0)
        out.append(float(dict(zip(labels, probs, strict=True)).get(label, 0.0)))
    return out
