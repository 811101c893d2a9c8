"""Exact weighted quantiles of float32 scores over a Spark table, from aggregates only: the
thresholds of ``contentx select --keep-top`` and ``--quality-buckets``.

A non-negative float32's bits, read as an int32, order the floats as their values do (IEEE 754),
and a score in [0, 1] has a key below 2^30.  The threshold that keeps a fraction F of the weight
is found in :data:`SHIFTS` passes, each one aggregation over the table: the first sums the weight
per ``key >> 20`` (at most 1,017 bins per score column), the bin where the weight at or above
reaches F is kept, the second sums the weight per ``key >> 10`` inside that bin only (at most
1,024 bins), the third per exact key inside the bin the second found.  Every threshold of every
column is searched in the same three passes; each pass collects at most 1,024 rows per threshold
searched, whatever the table's size, and nothing per document reaches the driver.  Each batch is
binned with numpy on the workers (``mapInArrow``), Spark sums the bins.

The threshold of a fraction F is the highest score s whose weight at or above s is at least
F x the total weight: the kept weight exceeds F x total by less than the weight of the documents
scored exactly s (one document's, when the scores differ).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

#: ``key >> shift`` of each pass (the last: the exact key).
SHIFTS = (20, 10, 0)
#: Relative slack of the comparison of a running weight with F x total (float rounding of F x W).
SLACK = 1e-12


@dataclass
class Cut:
    """One threshold: the fraction asked, the score (float32, as a float), the weight at or above
    it and the total weight of the documents scored."""

    fraction: float
    threshold: float | None
    kept_weight: float
    total_weight: float


@dataclass
class _Search:
    column: int
    fraction: float
    target: float = 0.0
    above: float = 0.0  # weight of the keys above the current bin
    prefix: int | None = None  # the bin of the previous pass the threshold is in
    key: int | None = None
    kept: float = 0.0


def keys_of(scores: np.ndarray) -> np.ndarray:
    """The order-preserving int32 keys of non-negative float32 scores (negatives and -0.0 as 0)."""
    s = np.asarray(scores, dtype=np.float32)
    return np.where(s > 0, s, np.float32(0)).astype(np.float32).view(np.int32)


def score_of(key: int) -> float:
    return float(np.array([key], dtype=np.int32).view(np.float32)[0])


def bin_batch(
    scores: Sequence[np.ndarray],
    valid: Sequence[np.ndarray],
    weights: np.ndarray,
    shift: int,
    previous: int | None,
    open_prefixes: Sequence[np.ndarray | None],
) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """For each score column ``c``: ``(c, bins, weight sums, counts)`` of this batch's documents
    with a score (``valid``) whose ``key >> previous`` is among ``open_prefixes[c]`` (None: all),
    binned by ``key >> shift``."""
    for c, (s, ok) in enumerate(zip(scores, valid, strict=True)):
        keys = keys_of(s)
        mask = ok.copy()
        if open_prefixes[c] is not None:
            if not len(open_prefixes[c]):
                continue
            mask &= np.isin(keys >> previous, open_prefixes[c])
        if not mask.any():
            continue
        bins, inverse = np.unique(keys[mask] >> shift, return_inverse=True)
        yield c, bins, np.bincount(inverse, weights=weights[mask]), np.bincount(inverse)


def _binned(names: Sequence[str], weight: str | None, shift: int, previous: int | None, open_prefixes):
    """``mapInArrow`` body of one pass (:func:`bin_batch` over each batch)."""
    import pyarrow as pa

    def run(batches):
        for batch in batches:
            if batch.num_rows == 0:
                continue
            scores, valid = [], []
            for name in names:
                column = batch.column(name).cast(pa.float32())
                ok = column.is_valid().to_numpy(zero_copy_only=False)
                values = column.fill_null(0).to_numpy(zero_copy_only=False)
                scores.append(values)
                valid.append(ok & ~np.isnan(values))
            if weight is None:
                w = np.ones(batch.num_rows, dtype=np.float64)
            else:
                w = batch.column(weight).cast(pa.float64()).fill_null(0).to_numpy(zero_copy_only=False)
            for c, bins, sums, counts in bin_batch(scores, valid, w, shift, previous, open_prefixes):
                yield pa.record_batch(
                    [
                        pa.array(np.full(len(bins), c, dtype=np.int32)),
                        pa.array(bins.astype(np.int64)),
                        pa.array(sums),
                        pa.array(counts.astype(np.int64)),
                    ],
                    names=["c", "bin", "w", "n"],
                )

    return run


def _walk(search: _Search, bins: list[tuple[int, float]]) -> tuple[int, float] | None:
    """The bin (descending) where ``search``'s running weight reaches its target: ``(bin, weight
    above it)``; None when it never does (no weight)."""
    running = search.above
    for b, w in bins:
        if running + w >= search.target * (1 - SLACK):
            return b, running
        running += w
    return None


def top_thresholds(frame, names: Sequence[str], weight: str | None, fractions: dict[str, Sequence[float]]):
    """``{name: [Cut, ...]}``: for each score column ``name`` of ``frame`` and each fraction F of
    ``fractions[name]``, the score at or above which F of the weight lies (``weight``: a numeric
    column; None: each document weighs 1), exactly, in :data:`SHIFTS` aggregations.  Documents
    without a score are left out."""
    from pyspark.sql import functions as F

    names = list(names)
    searches = [_Search(c, f) for c, name in enumerate(names) for f in fractions.get(name, ())]
    columns = [*names, *([weight] if weight else [])]
    source = frame.select(*columns)
    totals = [0.0] * len(names)
    previous: int | None = None
    for step, shift in enumerate(SHIFTS):
        open_prefixes: list[np.ndarray | None] = []
        for c in range(len(names)):
            if step == 0:
                open_prefixes.append(None)
            else:
                found = {s.prefix for s in searches if s.column == c and s.prefix is not None}
                open_prefixes.append(np.array(sorted(found), dtype=np.int64))
        if step and not any(p is not None and len(p) for p in open_prefixes):
            break
        rows = (
            source.mapInArrow(
                _binned(names, weight, shift, previous, open_prefixes), "c int, bin long, w double, n long"
            )
            .groupBy("c", "bin")
            .agg(F.sum("w").alias("w"))
            .collect()
        )
        per_column: dict[int, list[tuple[int, float]]] = {}
        for r in rows:
            per_column.setdefault(r["c"], []).append((int(r["bin"]), float(r["w"])))
        for c in per_column:
            per_column[c].sort(reverse=True)
        if step == 0:
            for c in range(len(names)):
                totals[c] = sum(w for _, w in per_column.get(c, []))
            for s in searches:
                s.target = s.fraction * totals[s.column]
        for s in searches:
            if s.prefix is None and step:
                continue  # nothing to find (no weight)
            bins = per_column.get(s.column, [])
            if step:
                width = previous - shift
                bins = [(b, w) for b, w in bins if b >> width == s.prefix]
            hit = _walk(s, bins)
            if hit is None or totals[s.column] <= 0:
                s.prefix = None
                continue
            b, s.above = hit
            s.prefix = b
            if shift == 0:
                s.key = b
                s.kept = s.above + dict(bins)[b]
        previous = shift
    out: dict[str, list[Cut]] = {name: [] for name in names}
    for s in searches:
        threshold = score_of(s.key) if s.key is not None else None
        out[names[s.column]].append(Cut(s.fraction, threshold, s.kept, totals[s.column]))
    return out


def reference_threshold(scores: np.ndarray, weights: np.ndarray, fraction: float) -> float | None:
    """:func:`top_thresholds`' threshold computed in memory (the tests' and small tables' check):
    the highest score whose weight at or above it is at least ``fraction`` of the total."""
    s = np.asarray(scores, dtype=np.float32)
    w = np.asarray(weights, dtype=np.float64)
    if not len(s) or w.sum() <= 0:
        return None
    values, inverse = np.unique(s, return_inverse=True)
    sums = np.bincount(inverse, weights=w)[::-1]
    reached = np.cumsum(sums) >= fraction * w.sum() * (1 - SLACK)
    return float(values[::-1][int(np.argmax(reached))])
