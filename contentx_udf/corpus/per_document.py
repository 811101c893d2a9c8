"""The corpus job's one pass over the texts, a batch of documents at a time (pure; the Spark side
wraps :func:`document_batch` in an Arrow UDF, so only these columns travel to Python and back).

For each document that passed the column filters (status, language, length, confidence, page
type): first, with ``--line-dedup``, the removal of its lines that repeat across the crawl
(:mod:`.lines`; the frequent keys come from the job's aggregation, either all of them in
:attr:`PassSettings.frequent` or the document's own in a column); a document left without a
non-blank line is dropped (``line_dedup``).  Then the quality filters (:mod:`.quality`, when
any is on), which may drop it or edit its text
(C4's line filter, PII masking), then the MinHash band hashes of the text they leave
(:mod:`.minhash`), and when near-duplicate edges are verified, a compact signature
(:func:`sketch`).  Documents already dropped by a column filter are passed over.  With
``--signals`` (:attr:`PassSettings.signals`) every filter measures every document (the
``signals`` struct) and the text and hash are given for every document filtered, as if kept (what
``contentx select`` writes when a re-cut keeps it); band hashes stay those of the documents the
build's filters keep (``select`` computes them for the documents a re-cut newly keeps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..text.language import text_hash
from ..text.tokens import TokenizerSpec, count_tokens
from .lines import LineSettings, remove_lines
from .minhash import (
    MinHashParams,
    band_hashes,
    has_signature,
    shingle_hashes,
    shingle_lengths,
    signatures,
    word_hashes,
)
from .quality import signals as quality_signals
from .scores import ScoredModel, column, first_below, score_texts

#: Bits of each MinHash value kept in the sketch used to verify an edge: two different values agree
#: on their low 16 bits with probability 2^-16, so the estimated Jaccard similarity is biased by
#: at most 1.5e-5 while the sketch is a quarter of the signature (224 bytes for 112 hashes).
SKETCH_BITS = 16

#: The Arrow type :func:`document_batch` returns (the Spark UDF's return type mirrors it).
RESULT_TYPE = pa.struct(
    [
        ("drop", pa.string()),
        ("rule", pa.string()),
        ("text", pa.string()),  # the edited text; null when the filters left it as it was
        ("text_hash", pa.string()),  # of the edited text; null when unchanged
        ("bands", pa.list_(pa.int64())),  # null: dropped, or fewer words than a shingle
        ("sketch", pa.binary()),  # null unless edges are verified
        ("emails_masked", pa.int32()),
        ("ips_masked", pa.int32()),
        ("c4_lines_removed", pa.int32()),
        ("profile", pa.string()),  # the FineWeb-2 language key that filtered it (fineweb2 preset)
        ("fallback", pa.string()),  # null, or why that key's own configuration was not used
        ("lines_removed", pa.int32()),  # by --line-dedup (repeated across the crawl)
        ("line_chars_removed", pa.int32()),
        ("line_example", pa.string()),  # the first line it removed, cut short
        ("signals", quality_signals.arrow_type()),  # every measure (--signals), else null
        ("quality", pa.list_(pa.float32())),  # each --quality-model's score; null: not scored
        ("token_count", pa.int64()),  # --tokenizer: tokens of the text as written (if kept), else null
    ]
)
RESULT_DDL = (
    "drop string, rule string, text string, text_hash string, bands array<bigint>, sketch binary, "
    "emails_masked int, ips_masked int, c4_lines_removed int, profile string, fallback string, "
    f"lines_removed int, line_chars_removed int, line_example string, signals {quality_signals.ddl()}, "
    "quality array<float>, token_count bigint"
)


@dataclass(frozen=True)
class PassSettings:
    """What the pass computes: ``minhash`` (None: no near dedup), ``sketch`` (verified edges) and
    ``quality`` (the quality filter settings; None: no quality filter), ``lines`` (line dedup;
    None: off) with ``frequent`` (the sorted uint64 keys of the frequent lines, or None when each
    document's keys come in a column)."""

    minhash: MinHashParams | None = None
    sketch: bool = False
    quality: Any = None
    lines: LineSettings | None = None
    frequent: np.ndarray | None = None
    #: ``--signals``: every filter measures every document (the ``signals`` struct), and the text,
    #: hash and PII counts are given for every document filtered, as if kept (band hashes: only
    #: for the documents the filters keep)
    signals: bool = False
    #: ``--quality-model``: the documents the filters keep (with ``signals``: every measured
    #: document, its text as if kept) are scored by each, and ``--quality-min`` drops those below
    #: it, counted as ``quality_NAME`` (:mod:`.scores`)
    models: tuple[ScoredModel, ...] = ()
    #: ``--tokenizer``: every document's ``token_count`` (:mod:`..text.tokens`), of the text as the
    #: build writes it if kept (the input text for a document dropped by a column filter, the text
    #: the filters left for one they dropped)
    tokens: TokenizerSpec | None = None
    #: ``--count-eos``: one more token per document
    count_eos: bool = False


def sketch(sigs: np.ndarray) -> list[bytes]:
    """Each signature's values cut to their low :data:`SKETCH_BITS` bits, as bytes."""
    low = (sigs & np.uint64((1 << SKETCH_BITS) - 1)).astype(np.uint16)
    return [row.tobytes() for row in low]


def sketch_similarity(a: bytes, b: bytes) -> float:
    """The share of positions on which two sketches agree: the estimated Jaccard similarity."""
    x = np.frombuffer(a, dtype=np.uint16)
    y = np.frombuffer(b, dtype=np.uint16)
    return float(np.mean(x == y)) if len(x) == len(y) and len(x) else 0.0


def _list_array(values: np.ndarray, present: np.ndarray) -> pa.Array:
    """A ``list<int64>`` array of the rows of ``values`` (2-D), null where ``present`` is False."""
    width = values.shape[1]
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum(np.where(present, width, 0))
    flat = pa.array(values[present].ravel(), type=pa.int64())
    return pa.ListArray.from_arrays(pa.array(offsets), flat, mask=pa.array(~present))


_STRING = pa.string()


def _scatter(values: pa.Array, index: np.ndarray, n: int, type_: pa.DataType = _STRING) -> pa.Array:
    """A length-``n`` array of ``type_`` holding ``values[j]`` at ``index[j]`` and null elsewhere."""
    mapping = np.full(n, len(values), dtype=np.int64)
    mapping[index] = np.arange(len(values))
    values = values.cast(type_)
    return pa.concat_arrays([values, pa.nulls(1, type=type_)]).take(pa.array(mapping))


def minhash_columns(
    texts: pa.Array, params: MinHashParams, with_sketch: bool, languages: pa.Array | None = None
) -> tuple[pa.Array, pa.Array]:
    """``(bands, sketch)`` of each text (:mod:`.minhash`; ``languages``, the texts' labels, set the
    shingles' length): null bands for a text shorter than a shingle, null sketches unless
    ``with_sketch``."""
    n = len(texts)
    words = word_hashes(texts, params.seed, params.words)
    shingles = shingle_hashes(words, shingle_lengths(languages, params), params.seed)
    sigs = signatures(shingles, params.num_perm, params.seed)
    present = has_signature(shingles)
    bands = _list_array(band_hashes(sigs, params.bands, params.rows, params.seed), present)
    sketches = pa.nulls(n, type=pa.binary())
    if with_sketch:
        signed = np.flatnonzero(present)
        sketches = _scatter(pa.array(sketch(sigs[signed]), type=pa.binary()), signed, n, pa.binary())
    return bands, sketches


def document_batch(
    texts: pa.Array,
    urls: pa.Array,
    languages: pa.Array,
    language_scores: pa.Array,
    dropped: pa.Array,
    settings: PassSettings,
    hosts: pa.Array | None = None,
    listed: pa.Array | None = None,
) -> pa.StructArray:
    """Filter decisions, edits and band hashes for one batch (``dropped``: the column filters' drop
    reason, null for the documents that passed them; ``hosts`` and ``listed``, each document's
    frequent line keys, for line dedup).  Returns a :data:`RESULT_TYPE` array."""
    n = len(texts)
    todo = dropped.is_null().to_numpy(zero_copy_only=False) & texts.is_valid().to_numpy(zero_copy_only=False)
    index = np.flatnonzero(todo)
    drop = rule = new_text = new_hash = profile = fallback = pa.nulls(n, type=pa.string())
    signal_column = pa.nulls(n, type=quality_signals.arrow_type())
    line_example = pa.nulls(n, type=pa.string())
    names = ("emails_masked", "ips_masked", "c4_lines_removed", "lines_removed", "line_chars_removed")
    counts = {k: np.zeros(n, dtype=np.int32) for k in names}
    final_texts, final_index = texts.take(pa.array(index)), index
    edited_by_lines = np.zeros(len(index), dtype=bool)
    if settings.lines is not None and len(index):
        taken = pa.array(index)
        removed = remove_lines(
            final_texts,
            hosts.take(taken) if hosts is not None else None,
            settings.lines,
            frequent=settings.frequent,
            listed=listed.take(taken) if settings.frequent is None and listed is not None else None,
        )
        counts["lines_removed"][index] = removed.lines
        counts["line_chars_removed"][index] = removed.chars
        line_example = _scatter(removed.example, index, n)
        has_text = pc.match_substring_regex(removed.text, r"\S").to_numpy(zero_copy_only=False)
        blank = removed.changed & ~has_text
        if blank.any():
            drop = _scatter(pa.array(["line_dedup"] * int(blank.sum()), type=pa.string()), index[blank], n)
        final_texts = removed.text.filter(pa.array(~blank))
        index, edited_by_lines = index[~blank], removed.changed[~blank]
        final_index = index
        if settings.quality is None and edited_by_lines.any():
            values = final_texts.filter(pa.array(edited_by_lines))
            new_text = _scatter(values, index[edited_by_lines], n)
            hashes = pa.array([text_hash(t) for t in values.to_pylist()], type=pa.string())
            new_hash = _scatter(hashes, index[edited_by_lines], n)
    if settings.quality is not None and len(index):
        from .quality.batch import apply_filters

        taken = pa.array(index)
        result = apply_filters(
            final_texts,
            urls.take(taken),
            languages.take(taken),
            language_scores.take(taken),
            settings.quality,
            full=settings.signals,
        )
        if result.measures is not None:
            measured = quality_signals.to_arrow(result.measures, len(index))
            signal_column = _scatter(measured, index, n, quality_signals.arrow_type())
        drop = pc.coalesce(drop, _scatter(result.drop, index, n))
        rule = _scatter(result.rule, index, n)
        profile, fallback = _scatter(result.profile, index, n), _scatter(result.fallback, index, n)
        for key in ("emails_masked", "ips_masked", "c4_lines_removed"):
            counts[key][index] = getattr(result, key)
        kept = np.ones(len(index), bool) if settings.signals else result.kept
        edited = np.flatnonzero(kept & (result.changed | edited_by_lines))
        if len(edited):
            values = result.text.take(pa.array(edited))
            new_text = _scatter(values, index[edited], n)
            hashes = pa.array([text_hash(t) for t in values.to_pylist()], type=pa.string())
            new_hash = _scatter(hashes, index[edited], n)
        # band hashes for the documents the build keeps only: `select` computes those of the
        # documents a re-cut newly keeps (few) itself
        if settings.models and settings.signals:
            scored_texts, scored_index = result.text, index
        final_texts, final_index = result.text.filter(pa.array(result.kept)), index[result.kept]
    quality = pa.nulls(n, type=pa.list_(pa.float32()))
    if settings.models:
        if not (settings.signals and settings.quality is not None and len(index)):
            scored_texts, scored_index = final_texts, final_index
        quality, drop, kept = _scored(scored_texts, scored_index, final_index, drop, n, settings.models)
        final_texts, final_index = final_texts.filter(pa.array(kept)), final_index[kept]
    bands = pa.nulls(n, type=pa.list_(pa.int64()))
    sketches = pa.nulls(n, type=pa.binary())
    if settings.minhash is not None and len(final_index):
        some_bands, some_sketches = minhash_columns(
            final_texts, settings.minhash, settings.sketch, languages.take(pa.array(final_index))
        )
        bands = _scatter(some_bands, final_index, n, bands.type)
        sketches = _scatter(some_sketches, final_index, n, pa.binary())
    token_counts = pa.nulls(n, type=pa.int64())
    if settings.tokens is not None:
        token_counts = count_tokens(settings.tokens, pc.coalesce(new_text, texts), settings.count_eos)
    return pa.StructArray.from_arrays(
        [
            drop,
            rule,
            new_text,
            new_hash,
            bands,
            sketches,
            *(pa.array(counts[k], type=pa.int32()) for k in names[:3]),
            profile,
            fallback,
            *(pa.array(counts[k], type=pa.int32()) for k in names[3:]),
            line_example,
            signal_column,
            quality,
            token_counts,
        ],
        fields=list(RESULT_TYPE),
    )


def _scored(texts: pa.Array, index: np.ndarray, kept_index: np.ndarray, drop: pa.Array, n: int, models):
    """``(quality, drop, kept)``: each document of ``index`` scored by every model (``texts``: its
    text), the ``quality`` column (null where not scored); ``drop`` with ``quality_NAME`` for the
    documents of ``kept_index`` (a subset of ``index``) below a ``--quality-min``; ``kept``: which
    of ``kept_index`` are still kept."""
    scores = score_texts(texts, models) if len(index) else [np.zeros(0, np.float32) for _ in models]
    width = len(models)
    present = np.zeros(n, dtype=bool)
    present[index] = True
    full = np.zeros((n, width), dtype=np.float32)
    for j, s in enumerate(scores):
        full[index, j] = s
    offsets = np.zeros(n + 1, dtype=np.int32)
    offsets[1:] = np.cumsum(np.where(present, width, 0))
    values = pa.array(full[present].ravel(), type=pa.float32())
    quality = pa.ListArray.from_arrays(pa.array(offsets), values, mask=pa.array(~present))
    failed = first_below([full[kept_index, j] for j in range(width)], models)
    below = failed >= 0
    if below.any():
        names = np.array([column(m.name) for m in models], dtype=object)[failed[below]]
        drop = pc.coalesce(drop, _scatter(pa.array(list(names), type=pa.string()), kept_index[below], n))
    return quality, drop, ~below
