"""The entry point of the quality filters: :func:`apply_filters` on a batch of documents.

Filters run in datatrove's FineWeb order, each on the documents the earlier ones kept:
``url`` -> ``language_score`` -> ``gopher_repetition`` -> ``gopher_quality`` -> ``c4`` ->
``fineweb``; C4 edits the text before FineWeb reads it; PII masking comes last, on kept
documents only.  Words and lines are cut once per batch (:class:`.text.TextBatch`) and shared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...text.arrays import as_strings, replace_at
from .c4 import C4Quality
from .fineweb import FineWebQuality
from .gopher import GopherQuality, GopherRepetition
from .pii import mask_pii
from .settings import FILTER_ORDER, Settings
from .text import TextBatch
from .verdicts import Verdicts

Strings = Sequence[str | None] | pa.Array | pa.ChunkedArray


@dataclass(frozen=True)
class FilterBatch:
    """Per document of a batch (all of equal length):

    * ``drop``: the first filter it fails (:data:`.settings.FILTER_ORDER`: the report's keys) or None;
    * ``rule``: that filter's sub-rule, ``"<filter>.<rule>"`` (e.g. ``gopher_quality.min_stop_words``);
    * ``text``: a kept document's text after C4's line edits and PII masking (the input text,
      the same string, when nothing changed); a dropped document's input text;
    * ``changed``: ``text`` differs from the input;
    * ``emails_masked``, ``ips_masked``: e-mail and IP addresses replaced by a fixed address
      (0 unless ``mask_pii``);
    * ``c4_lines_removed``: lines C4 removed from a kept document.
    """

    drop: pa.Array
    rule: pa.Array
    text: pa.Array
    changed: np.ndarray
    emails_masked: np.ndarray
    ips_masked: np.ndarray
    c4_lines_removed: np.ndarray

    def __len__(self) -> int:
        return len(self.text)

    @property
    def kept(self) -> np.ndarray:
        return ~self.drop.is_valid().to_numpy(zero_copy_only=False)

    def to_arrow(self) -> pa.RecordBatch:
        """The columns as one Arrow record batch (``drop``, ``rule``, ``text``, ``changed``,
        ``emails_masked``, ``ips_masked``, ``c4_lines_removed``)."""
        return pa.record_batch(
            {
                "drop": self.drop,
                "rule": self.rule,
                "text": self.text,
                "changed": pa.array(self.changed),
                "emails_masked": pa.array(self.emails_masked, pa.int32()),
                "ips_masked": pa.array(self.ips_masked, pa.int32()),
                "c4_lines_removed": pa.array(self.c4_lines_removed, pa.int32()),
            }
        )


class _Drops:
    """The first failed filter and rule of every document of the batch."""

    def __init__(self, n: int) -> None:
        self.drop: list[str | None] = [None] * n
        self.rule: list[str | None] = [None] * n
        self.alive = np.ones(n, bool)

    def record(self, docs: np.ndarray, verdicts: Verdicts) -> None:
        """Verdicts of a filter run on the documents ``docs`` (indices into the batch)."""
        names = verdicts.rule_names()
        for local in np.flatnonzero(verdicts.codes > 0).tolist():
            doc = int(docs[local])
            self.drop[doc] = verdicts.filter_name
            self.rule[doc] = names[local]
            self.alive[doc] = False


def apply_filters(
    texts: Strings,
    urls: Strings | None,
    languages: Strings | None,
    language_scores: Sequence[float | None] | pa.Array | np.ndarray | None,
    settings: Settings,
) -> FilterBatch:
    """Run the filters of ``settings`` on a batch (equal lengths; ``texts`` without nulls;
    ``languages`` None means English for every text) and return :class:`FilterBatch`."""
    texts = as_strings(texts)
    n = len(texts)
    if texts.null_count:
        raise ValueError("apply_filters: texts must not be null (only ok rows are filtered)")
    for name, column in (("urls", urls), ("languages", languages), ("language_scores", language_scores)):
        if column is not None and len(column) != n:
            raise ValueError(f"apply_filters: {name} has {len(column)} values for {n} texts")
    drops = _Drops(n)
    if settings.url_blocklist is not None and urls is not None:
        for i, kind in enumerate(settings.url_blocklist.match(as_strings(urls))):
            if kind is not None:
                drops.drop[i], drops.rule[i], drops.alive[i] = "url", f"url.{kind}", False
    if settings.min_language_score is not None:
        scores = _scores(language_scores, n)
        low = drops.alive & ~(scores >= settings.min_language_score)
        for i in np.flatnonzero(low).tolist():
            drops.drop[i], drops.rule[i], drops.alive[i] = (
                "language_score",
                "language_score.min_language_score",
                False,
            )
    out_text = texts
    lines_removed = np.zeros(n, np.int64)
    docs = np.flatnonzero(drops.alive)
    if len(docs) and _any_text_filter(settings):
        sub_languages = None if languages is None else as_strings(languages).take(docs)
        batch = TextBatch(texts.take(docs), sub_languages, not settings.word_rules_without_spaces)
        alive = np.ones(len(docs), bool)
        for filter_ in (GopherRepetition(settings.gopher_repetition), GopherQuality(settings.gopher_quality)):
            if filter_.settings.enabled:
                verdicts = filter_.evaluate(batch, alive)
                drops.record(docs, verdicts)
                alive &= verdicts.passed
        edited = batch.texts
        n_words = batch.word_counts
        if settings.c4.enabled:
            c4 = C4Quality(settings.c4).evaluate(batch, alive)
            drops.record(docs, c4.verdicts)
            alive &= c4.verdicts.passed
            edited = c4.texts()
            n_words = c4.kept_words
            lines_removed[docs] = np.where(alive, c4.lines_removed, 0)
        if settings.fineweb.enabled:
            verdicts = FineWebQuality(settings.fineweb).evaluate(edited, n_words, batch.no_space, alive)
            drops.record(docs, verdicts)
            alive &= verdicts.passed
        if settings.c4.enabled and alive.any():
            kept = np.flatnonzero(alive)
            out_text = replace_at(out_text, docs[kept], edited.take(kept))
        lines_removed[docs[~alive]] = 0
    emails = np.zeros(n, np.int64)
    ips = np.zeros(n, np.int64)
    kept = np.flatnonzero(drops.alive)
    if settings.mask_pii and len(kept):
        masked, emails[kept], ips[kept] = mask_pii(out_text.take(kept))
        out_text = replace_at(out_text, kept, masked)
    changed = pc.not_equal(out_text, texts).to_numpy(zero_copy_only=False).astype(bool)
    return FilterBatch(
        drop=pa.array(drops.drop, pa.string()),
        rule=pa.array(drops.rule, pa.string()),
        text=out_text,
        changed=changed,
        emails_masked=emails,
        ips_masked=ips,
        c4_lines_removed=lines_removed,
    )


def _any_text_filter(settings: Settings) -> bool:
    return any(
        section.enabled
        for section in (settings.gopher_repetition, settings.gopher_quality, settings.c4, settings.fineweb)
    )


def _scores(language_scores, n: int) -> np.ndarray:
    """The scores as floats, a missing score as -inf (it fails any minimum)."""
    if language_scores is None:
        return np.full(n, -np.inf)
    if isinstance(language_scores, pa.ChunkedArray):
        language_scores = language_scores.combine_chunks()
    if isinstance(language_scores, pa.Array):
        language_scores = language_scores.cast(pa.float64()).to_numpy(zero_copy_only=False)
    values = np.array([np.nan if x is None else x for x in language_scores], dtype=float)
    return np.where(np.isnan(values), -np.inf, values)


__all__ = ["FILTER_ORDER", "FilterBatch", "apply_filters"]
