"""The entry point of the quality filters: :func:`apply_filters` on a batch of documents.

Filters run in the order of the settings, each on the documents the earlier ones kept: datatrove's
FineWeb order ``url`` -> ``language_score`` -> ``gopher_repetition`` -> ``gopher_quality`` ->
``c4`` -> ``fineweb`` (C4 edits the text before FineWeb reads it), or FineWeb-2's
``gopher_repetition`` -> ``fineweb`` -> ``gopher_quality`` with ``fineweb2``, where every
document is filtered with its language's profile (:mod:`.profiles`); PII masking comes last, on
kept documents only.  Words and lines are cut once per batch, or once per segmenter
(:class:`.text.TextBatch`), and shared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...text.arrays import as_strings, replace_at
from ...text.codes import language_keys
from ...text.segment import DEFAULT
from .pii import mask_pii
from .profiles import UNDETERMINED, combined_settings, profile_for
from .registry import TEXT_FILTERS
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
    * ``c4_lines_removed``: lines C4 removed from a kept document;
    * ``profile``: the FineWeb-2 language key (``iso639-3_Script``, e.g. ``deu_Latn``) whose
      profile filtered the document (``fineweb2`` preset; null with the other presets);
    * ``fallback``: null when that key has its own FineWeb-2 configuration, else why another
      profile was used (:data:`.profiles.FALLBACK_REASONS`; null with the other presets).

    With ``full`` (``--signals``) every filter measures every document, whatever drops it, and
    ``text``, the PII counts and ``c4_lines_removed`` are those the document has if kept.
    """

    drop: pa.Array
    rule: pa.Array
    text: pa.Array
    changed: np.ndarray
    emails_masked: np.ndarray
    ips_masked: np.ndarray
    c4_lines_removed: np.ndarray
    profile: pa.Array | None = None
    fallback: pa.Array | None = None
    #: with ``full``: every measure of every document (:mod:`.signals`), name -> array of n
    measures: dict[str, np.ndarray] | None = None

    def __post_init__(self) -> None:
        n = len(self.text)
        for name in ("profile", "fallback"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, pa.nulls(n, pa.string()))

    def __len__(self) -> int:
        return len(self.text)

    @property
    def kept(self) -> np.ndarray:
        return ~self.drop.is_valid().to_numpy(zero_copy_only=False)

    def to_arrow(self) -> pa.RecordBatch:
        """The columns as one Arrow record batch (``drop``, ``rule``, ``text``, ``changed``,
        ``emails_masked``, ``ips_masked``, ``c4_lines_removed``, ``profile``, ``fallback``)."""
        return pa.record_batch(
            {
                "drop": self.drop,
                "rule": self.rule,
                "text": self.text,
                "changed": pa.array(self.changed),
                "emails_masked": pa.array(self.emails_masked, pa.int32()),
                "ips_masked": pa.array(self.ips_masked, pa.int32()),
                "c4_lines_removed": pa.array(self.c4_lines_removed, pa.int32()),
                "profile": self.profile,
                "fallback": self.fallback,
            }
        )


class _Drops:
    """The first failed filter and rule of every document of the batch."""

    def __init__(self, n: int) -> None:
        self.drop: list[str | None] = [None] * n
        self.rule: list[str | None] = [None] * n
        self.alive = np.ones(n, bool)

    def record(self, docs: np.ndarray, verdicts: Verdicts) -> None:
        """Verdicts of a filter run on the documents ``docs`` (indices into the batch); only
        documents still alive are recorded (a full run measures the others too)."""
        names = verdicts.rule_names()
        for local in np.flatnonzero((verdicts.codes > 0) & self.alive[docs]).tolist():
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
    full: bool = False,
) -> FilterBatch:
    """Run the filters of ``settings`` on a batch (equal lengths; ``texts`` without nulls;
    ``languages`` None means English for every text) and return :class:`FilterBatch`.

    With language profiles (``fineweb2``) each document's language key is computed once
    (:func:`~contentx_udf.text.codes.language_keys`) and gives its profile (:mod:`.profiles`);
    the batch is grouped by the profiles' segmenters and each group filtered in one pass, every
    threshold a per-document array (:func:`.profiles.combined_settings`).

    ``full``: every filter (on or off) measures every document, and ``measures`` holds it all
    (the ``--signals`` table); the verdicts are the same."""
    texts = as_strings(texts)
    n = len(texts)
    if texts.null_count:
        raise ValueError("apply_filters: texts must not be null (only ok rows are filtered)")
    for name, column in (("urls", urls), ("languages", languages), ("language_scores", language_scores)):
        if column is not None and len(column) != n:
            raise ValueError(f"apply_filters: {name} has {len(column)} values for {n} texts")
    drops = _Drops(n)
    measures = Measures(n) if full else None
    if settings.url_blocklist is not None and urls is not None:
        kinds = settings.url_blocklist.match(as_strings(urls))
        if measures is not None:
            measures.put("url_match", np.arange(n), np.asarray(list(kinds), dtype=object))
        for i, kind in enumerate(kinds):
            if kind is not None:
                drops.drop[i], drops.rule[i], drops.alive[i] = "url", f"url.{kind}", False
    if settings.language_profiles:
        groups, thresholds, profile_column, fallback_column = _profile_groups(texts, languages, settings)
    else:
        groups = [_Group(np.arange(n), [], np.zeros(n, np.int64), None, DEFAULT, settings)]
        thresholds = np.full(
            n, -np.inf if settings.min_language_score is None else settings.min_language_score
        )
        profile_column = fallback_column = None
    if np.isfinite(thresholds).any():
        scores = _scores(language_scores, n)
        low = drops.alive & ~(scores >= thresholds)
        for i in np.flatnonzero(low).tolist():
            drops.drop[i], drops.rule[i], drops.alive[i] = (
                "language_score",
                "language_score.min_language_score",
                False,
            )
    out_text = texts
    lines_removed = np.zeros(n, np.int64)
    for group in groups:
        alive = np.ones(len(group.members), bool) if full else drops.alive[group.members]
        docs = group.members[alive]
        if len(docs) == 0:
            continue
        if group.profiles:
            group_settings = combined_settings(group.profiles, group.profile_index[alive])
            sub_languages = group.keys.take(docs)
        else:
            group_settings = group.settings
            sub_languages = None if languages is None else as_strings(languages).take(docs)
        if not full and not _any_text_filter(group_settings):
            continue
        detect = ~np.asarray(group_settings.word_rules_without_spaces, bool)
        batch = TextBatch(texts.take(docs), sub_languages, detect, group.segmenter)
        passed, edited, removed = _run_text_filters(batch, group_settings, docs, drops, measures)
        if full:
            passed = np.ones(len(docs), bool)  # the text each document has if kept
        if removed is not None:
            lines_removed[docs] = np.where(passed, removed, 0)
            if passed.any():
                kept = np.flatnonzero(passed)
                out_text = replace_at(out_text, docs[kept], edited.take(kept))
    emails = np.zeros(n, np.int64)
    ips = np.zeros(n, np.int64)
    kept = np.arange(n) if full else np.flatnonzero(drops.alive)
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
        profile=profile_column,
        fallback=fallback_column,
        measures=measures,
    )


@dataclass
class _Group:
    """Documents filtered in one pass: ``members`` (batch indices); with language profiles, the
    ``profiles`` among them and each member's position in that list (``profile_index``), the
    batch's ``keys`` column; the ``segmenter`` they share; ``settings`` without profiles."""

    members: np.ndarray
    profiles: list
    profile_index: np.ndarray
    keys: pa.Array | None
    segmenter: str
    settings: Settings | None = None


def _profile_groups(texts: pa.Array, languages, settings: Settings):
    """The batch grouped by segmenter (one pass of the filters each, every threshold per
    document), each document's language-score threshold, and the ``profile`` and ``fallback``
    columns.  Keys and profiles are computed once per distinct label and key; one sort."""
    n = len(texts)
    codes = pa.array(np.full(n, "en", dtype=object), pa.string()) if languages is None else languages
    keys = pc.fill_null(language_keys(as_strings(codes), texts), UNDETERMINED)
    encoded = pc.dictionary_encode(keys)
    key_index = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    profiles = [profile_for(settings, key) for key in encoded.dictionary.to_pylist()]
    profile_keys = pa.array([p.key for p in profiles], pa.string())
    profile_column = profile_keys.take(encoded.indices)
    fallback_column = pa.array([p.fallback for p in profiles], pa.string()).take(encoded.indices)
    minimum = [p.settings.min_language_score for p in profiles]
    thresholds = np.array([-np.inf if m is None else m for m in minimum], float)[key_index]
    segmenters = sorted({p.segmenter for p in profiles})
    segmenter_index = np.array([segmenters.index(p.segmenter) for p in profiles], np.int64)[key_index]
    order = np.argsort(segmenter_index, kind="stable")
    bounds = np.flatnonzero(np.diff(segmenter_index[order])) + 1
    groups = []
    for members in np.split(order, bounds) if n else []:
        used, local = np.unique(key_index[members], return_inverse=True)
        group_profiles = [profiles[i] for i in used.tolist()]
        groups.append(_Group(members, group_profiles, local, profile_column, group_profiles[0].segmenter))
    return groups, thresholds, profile_column, fallback_column


def _run_text_filters(
    batch: TextBatch,
    settings: Settings,
    docs: np.ndarray,
    drops: _Drops,
    measures: Measures | None = None,
) -> tuple[np.ndarray, pa.Array, np.ndarray | None]:
    """The text filters of ``settings`` in its order on ``batch`` (the documents ``docs``);
    returns which passed, the texts (C4's edits) and C4's removed lines (None without C4).
    FineWeb reads C4's edited text when C4 ran before it.

    ``measures`` (a dict, full mode): every filter, on or off, measures every document of the
    batch, its measures stored there at ``docs``; the verdicts only count where the filter is on
    and the document still alive."""
    full = measures is not None
    alive = np.ones(batch.n, bool)
    edited, n_words, removed = batch.texts, batch.word_counts, None
    everyone = np.ones(batch.n, bool)
    for name in settings.order:
        text_filter = TEXT_FILTERS.get(name)
        if text_filter is None:  # (the URL lists and the language score: decided before)
            continue
        section = getattr(settings, name)
        enabled = np.broadcast_to(np.asarray(getattr(section, "enabled", False), bool), (batch.n,))
        if not enabled.any() and not full:
            continue
        todo = alive & enabled  # a per-document switch (language profiles)
        scope = everyone if full else todo
        result = text_filter(section).run(batch, edited, n_words, scope, full)
        verdicts = getattr(result, "verdicts", result)
        if result is not verdicts:  # a filter that edits the text (C4's line rules): later ones read it
            removed = result.lines_removed
            if enabled.all():
                edited, n_words = result.texts(), result.kept_words
            elif enabled.any():  # on for some documents only: the others keep their text
                edited = pc.if_else(pa.array(enabled), result.texts(), edited)
                n_words = np.where(enabled, result.kept_words, n_words)
            if not enabled.all():
                removed = np.where(enabled, removed, 0)
        if full:
            for key, values in verdicts.measures.items():
                measures.put(key, docs, values)
            verdicts.codes[~todo] = 0
        drops.record(docs, verdicts)
        alive &= verdicts.passed
    return alive, edited, removed


class Measures(dict):
    """Per-document measures of a batch of ``n`` documents (name -> array of ``n``), filled a
    group of documents at a time."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def put(self, key: str, docs: np.ndarray, values) -> None:
        """``self[key][docs] = values``, the column created (zeros, or None for objects) first."""
        values = np.asarray(values)
        if key not in self:
            self[key] = np.zeros(self.n, values.dtype) if values.dtype != object else np.full(self.n, None)
        self[key][docs] = values


def _any_text_filter(settings: Settings) -> bool:
    return any(
        np.asarray(section.enabled, bool).any()
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
