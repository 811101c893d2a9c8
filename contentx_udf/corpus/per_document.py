"""The corpus job's one pass over the texts, a batch of documents at a time (pure; the Spark side
wraps :func:`document_batch` in an Arrow UDF, so only these columns travel to Python and back).

For each document that passed the column filters (status, language, length, confidence, page
type): the quality filters (:mod:`.quality`, when any is on), which may drop it or edit its text
(C4's line filter, PII masking), then the MinHash band hashes of the text they leave
(:mod:`.minhash`), and when near-duplicate edges are verified, a compact signature
(:func:`sketch`).  Documents already dropped by a column filter are passed over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from .language import text_hash
from .minhash import MinHashParams, band_hashes, has_signature, shingle_hashes, signatures, word_hashes

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
    ]
)
RESULT_DDL = (
    "drop string, rule string, text string, text_hash string, bands array<bigint>, sketch binary, "
    "emails_masked int, ips_masked int, c4_lines_removed int"
)


@dataclass(frozen=True)
class PassSettings:
    """What the pass computes: ``minhash`` (None: no near dedup), ``sketch`` (verified edges) and
    ``quality`` (the quality filter settings; None: no quality filter)."""

    minhash: MinHashParams | None = None
    sketch: bool = False
    quality: Any = None


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


def document_batch(
    texts: pa.Array,
    urls: pa.Array,
    languages: pa.Array,
    language_scores: pa.Array,
    dropped: pa.Array,
    settings: PassSettings,
) -> pa.StructArray:
    """Filter decisions, edits and band hashes for one batch (``dropped``: the column filters' drop
    reason, null for the documents that passed them).  Returns a :data:`RESULT_TYPE` array."""
    n = len(texts)
    todo = np.asarray(dropped.is_null().to_numpy(zero_copy_only=False), dtype=bool) & np.asarray(
        texts.is_valid().to_numpy(zero_copy_only=False), dtype=bool
    )
    drop: list[str | None] = [None] * n
    rule: list[str | None] = [None] * n
    new_text: list[str | None] = [None] * n
    new_hash: list[str | None] = [None] * n
    counts = {k: np.zeros(n, dtype=np.int32) for k in ("emails_masked", "ips_masked", "c4_lines_removed")}
    final_texts = texts
    index = np.flatnonzero(todo)
    if settings.quality is not None and len(index):
        from .quality import apply_filters

        result = apply_filters(
            texts.take(pa.array(index)),
            urls.take(pa.array(index)),
            languages.take(pa.array(index)),
            language_scores.take(pa.array(index)),
            settings.quality,
        )
        edited = list(texts.to_pylist())
        for j, i in enumerate(index.tolist()):
            drop[i] = result.drop[j]
            rule[i] = result.rule[j]
            if result.drop[j] is not None:
                todo[i] = False
            elif result.changed[j]:
                new_text[i] = edited[i] = result.text[j]
                new_hash[i] = text_hash(result.text[j])
        for key in counts:
            counts[key][index] = getattr(result, key)
        final_texts = pa.array(edited, type=pa.string())
    bands = pa.nulls(n, type=pa.list_(pa.int64()))
    sketches = pa.nulls(n, type=pa.binary())
    params = settings.minhash
    index = np.flatnonzero(todo)
    if params is not None and len(index):
        words = word_hashes(final_texts.take(pa.array(index)), params.seed)
        shingles = shingle_hashes(words, params.shingle_words, params.seed)
        sigs = signatures(shingles, params.num_perm, params.seed)
        present = np.zeros(n, dtype=bool)
        present[index] = has_signature(shingles)
        full = np.zeros((n, params.bands), dtype=np.int64)
        full[index] = band_hashes(sigs, params.bands, params.rows, params.seed)
        bands = _list_array(full, present)
        if settings.sketch:
            cut = [None] * n
            for i, value in zip(index.tolist(), sketch(sigs), strict=True):
                cut[i] = value if present[i] else None
            sketches = pa.array(cut, type=pa.binary())
    return pa.StructArray.from_arrays(
        [
            pa.array(drop, type=pa.string()),
            pa.array(rule, type=pa.string()),
            pa.array(new_text, type=pa.string()),
            pa.array(new_hash, type=pa.string()),
            bands,
            sketches,
            *(
                pa.array(counts[k], type=pa.int32())
                for k in ("emails_masked", "ips_masked", "c4_lines_removed")
            ),
        ],
        fields=list(RESULT_TYPE),
    )
