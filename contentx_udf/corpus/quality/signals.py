"""The quality signals: every measure the filters compute, as stored by ``--signals``, and the
verdicts read back from them (:func:`judge`) under any thresholds.

The filters measure (:meth:`.gopher.GopherRepetition.evaluate` and the others with ``full``)
and decide in one pass; :func:`judge` is their decision alone: the same tests of the same
measures (each filter's ``tests``, :mod:`.registry`; the rules are written once, in the filter's
module), in the same order, so a threshold changed after the build gives the verdict the build
would have given (``contentx select``).
Every measure is a count (int32) so that no ratio is rounded: a float32 share of 0.3 is above
0.3.  RedPajama-V2 (Together, 2023) stores its ~40 quality signals per document in the same spirit.

What the signals cannot re-decide: settings that change a measure or the text itself
(:data:`MEASURE_KEYS`: C4's line rules, the stop words, FineWeb's short-line length, the
segmenters and language profiles, the URL lists, PII masking).  A re-cut must keep them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .profiles import combined_settings, profile_for
from .registry import TEXT_FILTERS
from .settings import Settings


@dataclass(frozen=True)
class Signal:
    """A stored measure: its column, Arrow type and what it is, and the rules that read it."""

    name: str
    type: pa.DataType
    doc: str
    rules: str


_I32 = pa.int32()
_NGRAMS = [
    Signal(
        f"gr_top_{n}_gram_chars",
        _I32,
        f"characters of the most frequent word {n}-gram x its count",
        f"gopher_repetition.top_{n}_gram_frac",
    )
    for n in (2, 3, 4)
] + [
    Signal(
        f"gr_dup_{n}_gram_chars",
        _I32,
        f"characters of repeated word {n}-grams (datatrove's greedy count, exact)",
        f"gopher_repetition.dup_{n}_gram_frac",
    )
    for n in range(5, 11)
]

#: The measure columns, in the order of the signals table (all int32 counts unless said).
SIGNALS: tuple[Signal, ...] = (
    Signal(
        "no_space",
        pa.bool_(),
        "a script without spaces: the word rules are skipped",
        "gopher_quality word rules, fineweb.max_newline_word_ratio, gopher_repetition n-grams",
    ),
    Signal("url_match", pa.string(), "the URL list that matched (null: none, or no list)", "url"),
    Signal(
        "gr_chars",
        _I32,
        "characters of the text the filters read",
        "gopher_repetition.empty and every *_char_frac / *_gram_frac denominator",
    ),
    Signal("gr_paragraphs", _I32, "paragraphs (split at blank lines)", "gopher_repetition.dup_para_frac"),
    Signal(
        "gr_dup_paragraphs", _I32, "paragraphs repeating an earlier one", "gopher_repetition.dup_para_frac"
    ),
    Signal(
        "gr_dup_paragraph_chars",
        _I32,
        "characters of those paragraphs",
        "gopher_repetition.dup_para_char_frac",
    ),
    Signal("gr_lines", _I32, "lines (re.split('\\n+'))", "gopher_repetition.dup_line_frac"),
    Signal("gr_dup_lines", _I32, "lines repeating an earlier one", "gopher_repetition.dup_line_frac"),
    Signal("gr_dup_line_chars", _I32, "characters of those lines", "gopher_repetition.dup_line_char_frac"),
    *_NGRAMS,
    Signal(
        "gq_words",
        _I32,
        "words, punctuation included",
        "gopher_quality.max_hash_word_ratio, max_ellipsis_word_ratio, min_alpha_words_ratio",
    ),
    Signal(
        "gq_real_words",
        _I32,
        "words that are not only punctuation",
        "gopher_quality.min_words, max_words, *_mean_word_length",
    ),
    Signal(
        "gq_real_word_chars", _I32, "characters of those words", "gopher_quality.min/max_mean_word_length"
    ),
    Signal("gq_hashes", _I32, "'#' characters", "gopher_quality.max_hash_word_ratio"),
    Signal("gq_ellipses", _I32, "'...' and '…'", "gopher_quality.max_ellipsis_word_ratio"),
    Signal(
        "gq_lines",
        _I32,
        "lines (str.splitlines())",
        "gopher_quality.max_bullet_lines_ratio, max_ellipsis_lines_ratio",
    ),
    Signal("gq_bullet_lines", _I32, "lines starting with a bullet", "gopher_quality.max_bullet_lines_ratio"),
    Signal(
        "gq_ellipsis_lines", _I32, "lines ending in an ellipsis", "gopher_quality.max_ellipsis_lines_ratio"
    ),
    Signal("gq_alpha_words", _I32, "words holding a letter", "gopher_quality.min_alpha_words_ratio"),
    Signal(
        "gq_stop_words",
        _I32,
        "distinct stop words of its language (-1: no list)",
        "gopher_quality.min_stop_words",
    ),
    Signal(
        "c4_page_rule",
        pa.int8(),
        "1: a kept line says 'lorem ipsum', 2: has '{' (the first such line)",
        "c4.lorem_ipsum, c4.curly_bracket",
    ),
    Signal("c4_lines_removed", _I32, "lines C4's line rules remove", "(the text; report)"),
    Signal("c4_words", _I32, "words of the lines C4 keeps", "fineweb.max_newline_word_ratio (after C4)"),
    Signal("c4_sentences", _I32, "sentences of the lines C4 keeps", "c4.min_sentences"),
    Signal(
        "fw_lines",
        _I32,
        "non-blank lines of the text FineWeb reads",
        "fineweb.empty, min_line_punct_ratio, max_short_line_ratio",
    ),
    Signal("fw_words", _I32, "its words", "fineweb.max_newline_word_ratio"),
    Signal("fw_punct_lines", _I32, "lines ending in terminal punctuation", "fineweb.min_line_punct_ratio"),
    Signal(
        "fw_short_lines",
        _I32,
        "lines of at most short_line_length characters",
        "fineweb.max_short_line_ratio",
    ),
    Signal("fw_newlines", _I32, "newlines", "fineweb.max_newline_word_ratio"),
    Signal("fw_dup_line_chars", _I32, "characters of repeated lines", "fineweb.max_dup_line_char_ratio"),
    Signal("fw_chars", _I32, "characters without newlines", "fineweb.max_dup_line_char_ratio"),
)

#: Settings a re-cut must keep (they change a measure or the text, not only a verdict).
MEASURE_KEYS = (
    "url_blocklist",
    "mask_pii",
    "word_rules_without_spaces",
    "language_profiles",
    "c4.enabled",
    "c4.max_word_length",
    "c4.min_words_per_line",
    "c4.javascript_lines",
    "c4.policy_lines",
    "c4.citations",
    "c4.terminal_punctuation",
    "c4.lorem_ipsum",
    "c4.curly_bracket",
    "gopher_quality.stop_words",
    "fineweb.short_line_length",
)


def arrow_type() -> pa.StructType:
    """The ``signals`` struct of the corpus job's pass."""
    return pa.struct([(s.name, s.type) for s in SIGNALS])


def ddl() -> str:
    """The same as a Spark DDL type."""
    names = {pa.int32(): "int", pa.int8(): "tinyint", pa.bool_(): "boolean", pa.string(): "string"}
    return "struct<" + ", ".join(f"{s.name}: {names[s.type]}" for s in SIGNALS) + ">"


def to_arrow(measures: dict[str, np.ndarray], n: int) -> pa.StructArray:
    """The measures of a batch (:class:`.batch.Measures`) as a :func:`arrow_type` array."""
    arrays = []
    for s in SIGNALS:
        values = measures.get(s.name)
        if values is None:
            arrays.append(pa.nulls(n, s.type))
        elif s.type == pa.string():
            arrays.append(pa.array(list(values), s.type))
        else:
            arrays.append(pa.array(np.asarray(values).astype(s.type.to_pandas_dtype()), s.type))
    return pa.StructArray.from_arrays(arrays, fields=list(arrow_type()))


def _get(settings: Settings, key: str):
    section, _, name = key.rpartition(".")
    return getattr(getattr(settings, section) if section else settings, name)


def changed_measure_keys(built: Settings, wanted: Settings) -> list[str]:
    """The :data:`MEASURE_KEYS` whose value differs where it matters, and the per-language
    overrides that differ.  C4's line rules matter when C4 runs in either (it edits the text);
    the stop words and FineWeb's short-line length when the re-cut runs the filter that reads
    them."""

    def on(settings: Settings, section: str) -> bool:
        return bool(np.any(getattr(settings, section).enabled))

    def matters(key: str) -> bool:
        if key.startswith("c4."):
            return on(built, "c4") or on(wanted, "c4")
        if key == "gopher_quality.stop_words":
            return on(wanted, "gopher_quality")
        if key == "fineweb.short_line_length":
            return on(wanted, "fineweb")
        return True

    out = [k for k in MEASURE_KEYS if matters(k) and _get(built, k) != _get(wanted, k)]
    if built.language_overrides != wanted.language_overrides:
        out.append("fineweb2.<language>.*")
    return out


def _minimum_score(settings: Settings, n: int, keys: np.ndarray | None) -> tuple[np.ndarray, Settings]:
    """Per document: its language-score minimum (-inf: none) and the settings its rules read."""
    if not settings.language_profiles:
        value = settings.min_language_score
        return np.full(n, -np.inf if value is None else value), settings
    unique, index = np.unique(np.asarray(keys, dtype=object).astype(str), return_inverse=True)
    profiles = [profile_for(settings, None if k in ("None", "") else k) for k in unique.tolist()]
    low = np.array(
        [
            -np.inf if p.settings.min_language_score is None else p.settings.min_language_score
            for p in profiles
        ]
    )
    return low[index], combined_settings(profiles, index)


def judge(
    m: dict[str, np.ndarray], scores: np.ndarray, settings: Settings, profile_keys: np.ndarray | None = None
) -> tuple[list[str | None], list[str | None]]:
    """``(drop, rule)`` per document from its measures ``m`` (name -> array), its language score
    (NaN: missing) and ``settings``, as :func:`.batch.apply_filters` decides: the URL lists, the
    language score, then the text filters in ``settings.order``; the first rule failed wins.
    ``profile_keys``: each document's profile (``fineweb2``)."""
    n = len(scores)
    drop: list[str | None] = [None] * n
    rule: list[str | None] = [None] * n
    alive = np.ones(n, bool)

    def fail(filter_name: str, rule_name: str, failing) -> None:
        hit = np.flatnonzero(np.broadcast_to(failing, (n,)) & alive)
        for i in hit.tolist():
            drop[i], rule[i] = filter_name, f"{filter_name}.{rule_name}"
        alive[hit] = False

    if settings.url_blocklist is not None:
        for i, kind in enumerate(m["url_match"].tolist()):
            if kind is not None:
                drop[i], rule[i], alive[i] = "url", f"url.{kind}", False
    minimum, s = _minimum_score(settings, n, profile_keys)
    scores = np.where(np.isnan(scores), -np.inf, scores)
    fail("language_score", "min_language_score", ~(scores >= minimum))
    spaced = ~m["no_space"].astype(bool)
    for name in s.order:
        text_filter = TEXT_FILTERS.get(name)
        if text_filter is None:  # (the URL lists and the language score: above)
            continue
        section = getattr(s, name)
        enabled = np.broadcast_to(np.asarray(section.enabled, bool), (n,))
        if not enabled.any():
            continue
        before = alive.copy()
        alive &= enabled
        for rule_name, test in text_filter.tests.items():  # the filter's own rules
            fail(name, rule_name, test(m, section, spaced))
        alive |= before & ~enabled
    return drop, rule
