"""Building hand-made texts and running one filter on them."""

from __future__ import annotations

import dataclasses
import itertools
import string

import numpy as np

from contentx_udf.corpus.quality import settings as presets
from contentx_udf.corpus.quality.text import TextBatch

THRESHOLD_KINDS = ("ratio", "count", "length")


def only(section, **kept):
    """``section`` with every threshold off except ``kept`` (switches are left as they are)."""
    values = {}
    for f in dataclasses.fields(section):
        if f.metadata.get("kind") in THRESHOLD_KINDS and "None" in str(f.type):
            values[f.name] = kept.get(f.name)
        elif f.name in kept:
            values[f.name] = kept[f.name]
    return dataclasses.replace(section, **values)


def fillers(count: int, length: int = 5, start: int = 0) -> list[str]:
    """``count`` distinct lower-case words of ``length`` letters."""
    letters = itertools.product(string.ascii_lowercase, repeat=length)
    return ["".join(w) for w in itertools.islice(letters, start, start + count)]


def rules(verdicts) -> list[str | None]:
    return [None if name is None else name.split(".", 1)[1] for name in verdicts.rule_names()]


def repetition(texts, settings=presets.GOPHER_REPETITION, **kw):
    from contentx_udf.corpus.quality.gopher import GopherRepetition

    batch = TextBatch(texts, **kw)
    return rules(GopherRepetition(settings).evaluate(batch, np.ones(batch.n, bool)))


def quality(texts, settings=presets.GOPHER_QUALITY, languages=None, **kw):
    from contentx_udf.corpus.quality.gopher import GopherQuality

    batch = TextBatch(texts, languages, **kw)
    return rules(GopherQuality(settings).evaluate(batch, np.ones(batch.n, bool)))


def c4(texts, settings=presets.C4, **kw):
    """``(rules, edited texts, C4Result)``."""
    from contentx_udf.corpus.quality.c4 import C4Quality

    batch = TextBatch(texts, **kw)
    result = C4Quality(settings).evaluate(batch, np.ones(batch.n, bool))
    return rules(result.verdicts), result.texts().to_pylist(), result


def fineweb(texts, settings=presets.FINEWEB, **kw):
    from contentx_udf.corpus.quality.fineweb import FineWebQuality

    batch = TextBatch(texts, **kw)
    alive = np.ones(batch.n, bool)
    verdicts = FineWebQuality(settings).evaluate(batch.texts, batch.word_counts, batch.no_space, alive)
    return rules(verdicts)
