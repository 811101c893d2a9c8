"""``contentx select``'s cuts by model score: ``--quality-min`` again over the stored scores,
``--keep-top NAME=FRACTION`` (DCLM's top x %) and ``--quality-buckets`` (Nemotron-CC's ensemble
of percentile bins), among the documents that pass the re-cut's other filters.

Spark-thin: the thresholds come from :func:`.quantiles.top_thresholds` (exact, a few aggregations,
no per-document data to the driver); the cuts are column expressions over the judged signals
(``_drop``: the re-cut's first failed filter so far), compared in float32 as the build compares
(:func:`.scores.below_sql`), so that a full build with ``--quality-min NAME=T`` at the recorded
threshold T drops exactly the documents ``--keep-top`` drops.

* ``--keep-top NAME=FRACTION``: the threshold is the highest score whose weight at or above it
  (documents, UTF-8 bytes of the text as kept: ``text_bytes``, or tokens of that text:
  ``token_count``, :data:`WEIGHT_COLUMNS`) is at least FRACTION of the weight of the documents
  that pass every other filter; the documents below it are dropped as ``quality_NAME``.  It
  replaces a ``--quality-min`` of the same model.
* ``--quality-buckets A,B,C --bins K``: each model's bin lower edges are its thresholds at the top
  fractions (K-1)/K ... 1/K of the bytes (so bin ``k`` holds about 1/K of the bytes, ``K-1`` the
  best); a document's bin is the number of edges its score reaches, its bucket the highest of its
  models' bins (``bucket`` column: the documents are written as ``bucket=K/``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UserError
from .quantiles import top_thresholds
from .scores import below_sql, column, threshold_text

#: The column of the bytes weight (the signals table's, with a model).
BYTES = "text_bytes"
#: The column of the tokens weight (the build's ``--tokenizer`` counts, or the re-cut's own).
TOKENS = "token_count"
#: ``--keep-top-weight``: what the fraction counts, and the column it sums (None: one a document).
WEIGHT_COLUMNS: dict[str, str | None] = {"documents": None, "bytes": BYTES, "tokens": TOKENS}
WEIGHTS = tuple(WEIGHT_COLUMNS)
#: The bucket column (and the documents' partition).
BUCKET = "bucket"
DEFAULT_BINS = 20


@dataclass(frozen=True)
class Request:
    """What ``select`` cuts: ``keep_top`` ``(name, fraction)`` weighted by ``weight``, and
    ``buckets`` (model names) of ``bins`` bins."""

    keep_top: tuple[str, float] | None = None
    weight: str = "documents"
    buckets: tuple[str, ...] = ()
    bins: int = DEFAULT_BINS

    def models(self) -> list[str]:
        return [*([self.keep_top[0]] if self.keep_top else []), *self.buckets]


def parse_request(keep_top: str | None, weight: str, buckets: str | None, bins: int) -> Request:
    """The flags as a :class:`Request`; a bad value is one :class:`UserError` line."""
    top = None
    if keep_top is not None:
        name, sep, value = keep_top.partition("=")
        try:
            fraction = float(value)
        except ValueError:
            fraction = -1.0
        if not sep or not name.strip() or not 0 < fraction <= 1:
            raise UserError(f"--keep-top expects NAME=FRACTION with 0 < FRACTION <= 1, got {keep_top!r}")
        top = (name.strip(), fraction)
    names: tuple[str, ...] = ()
    if buckets is not None:
        names = tuple(dict.fromkeys(n.strip() for n in buckets.split(",") if n.strip()))
        if not names:
            raise UserError(f"--quality-buckets expects NAME,NAME,..., got {buckets!r}")
    if not 2 <= bins <= 1000:
        raise UserError(f"--bins must be between 2 and 1000, got {bins}")
    return Request(top, weight, names, bins)


def check(request: Request, models: Sequence[str], counted: bool = False) -> None:
    """Every model named was scored by the build; a fraction of the tokens needs token counts
    (``counted``: the build's ``--tokenizer``, or the re-cut's own)."""
    for name in request.models():
        if name not in models:
            raise UserError(
                f"select: the build scored no model {name!r} (its models: {', '.join(models) or 'none'}; "
                "build with --quality-model NAME=PATH --signals)"
            )
    if request.keep_top is not None and request.weight == "tokens" and not counted:
        raise UserError(
            "--keep-top-weight tokens counts the documents' token_count, and the build counted none "
            "(built without --tokenizer): give select --tokenizer FILE"
        )


def needs_counts(request: Request) -> bool:
    """Whether the threshold searches read ``token_count`` (``--keep-top-weight tokens``; the
    buckets' token totals use it when it is there)."""
    return request.keep_top is not None or bool(request.buckets)


def apply(rows, minima: dict[str, float], request: Request, persist: Callable[[Any], Any]):
    """``(rows, report, bucketed)``: the judged ``rows`` (``_drop``) with the ``--quality-min``
    cuts, the ``--keep-top`` cut and (``bucketed``) the :data:`BUCKET` column; ``report``: the
    thresholds and weights (``_report.json``'s ``quality_cuts``).  ``persist`` keeps ``rows`` for
    the threshold searches."""
    from pyspark.sql import functions as F

    top = request.keep_top
    minima = {n: t for n, t in minima.items() if top is None or n != top[0]}
    rows = rows.withColumn("_drop", _cut(F.col("_drop"), minima))
    report: dict[str, Any] = {}
    if minima:
        report["quality_min"] = {n: threshold_text(t) for n, t in minima.items()}
    if top is None and not request.buckets:
        return rows, report, False
    rows = persist(rows)
    if top is not None:
        name, fraction = top
        weight = WEIGHT_COLUMNS[request.weight]
        if weight is not None and weight not in rows.columns:
            raise UserError(f"--keep-top-weight {request.weight}: the rows have no {weight} column")
        passing = rows.where(F.col("_drop").isNull())
        cut = top_thresholds(passing, [column(name)], weight, {column(name): [fraction]})[column(name)][0]
        threshold = None if cut.threshold is None else threshold_text(cut.threshold)
        report["keep_top"] = {
            "model": name,
            "fraction": fraction,
            "weight": request.weight,
            "threshold": threshold,
            "kept_weight": cut.kept_weight,
            "total_weight": cut.total_weight,
            "kept_share": round(cut.kept_weight / cut.total_weight, 6) if cut.total_weight else None,
            "same_as": None if threshold is None else f"--quality-min {name}={threshold!r}",
        }
        if threshold is not None:
            rows = rows.withColumn("_drop", _cut(F.col("_drop"), {name: threshold}))
    if not request.buckets:
        return rows, report, False
    passing = rows.where(F.col("_drop").isNull())
    bins = request.bins
    fractions = [(bins - k) / bins for k in range(1, bins)]
    names = [column(n) for n in request.buckets]
    found = top_thresholds(passing, names, BYTES, dict.fromkeys(names, fractions))
    edges = {
        n: [threshold_text(c.threshold) if c.threshold is not None else 2.0 for c in found[column(n)]]
        for n in request.buckets
    }
    model_bins = {n: _bin(n, edges[n]) for n in request.buckets}
    bucket = F.greatest(*model_bins.values()) if len(model_bins) > 1 else next(iter(model_bins.values()))
    rows = rows.withColumn(BUCKET, F.when(F.col("_drop").isNull(), bucket))
    report["buckets"] = {
        "models": list(request.buckets),
        "bins": bins,
        "weight": "bytes",
        "edges": edges,
        **_bucket_counts(rows.where(F.col("_drop").isNull()), model_bins, bins),
    }
    return rows, report, True


def _cut(drop, minima: dict[str, float]):
    """``drop`` with ``quality_NAME`` for the documents below each minimum (the first model's)."""
    from pyspark.sql import functions as F

    for name, threshold in minima.items():
        drop = F.coalesce(drop, F.when(below_sql(name, threshold), F.lit(column(name))))
    return drop


def _bin(name: str, edges: Sequence[float]):
    """Model ``name``'s bin: how many of its edges (ascending) the score reaches (float32)."""
    from pyspark.sql import functions as F

    score = F.col(column(name))
    reached = [F.coalesce((score >= F.lit(e).cast("float")).cast("int"), F.lit(0)) for e in edges]
    total = reached[0]
    for r in reached[1:]:
        total = total + r
    return total


def _bucket_counts(passing, model_bins: dict[str, Any], bins: int) -> dict[str, Any]:
    """One aggregation: documents and bytes (and, when the rows have their ``token_count``, tokens)
    per bucket and per bin of each model."""
    from pyspark.sql import functions as F

    tokens = TOKENS in passing.columns

    keys = [F.struct(F.lit(BUCKET).alias("k"), F.col(BUCKET).alias("b"))]
    keys += [F.struct(F.lit(n).alias("k"), b.alias("b")) for n, b in model_bins.items()]
    rows = (
        passing.select(
            F.col(BYTES).cast("long").alias("w"),
            (F.col(TOKENS) if tokens else F.lit(None).cast("long")).alias("t"),
            F.explode(F.array(*keys)).alias("x"),
        )
        .groupBy(F.col("x.k").alias("k"), F.col("x.b").alias("b"))
        .agg(F.count("*").alias("documents"), F.sum("w").alias("bytes"), F.sum("t").alias("tokens"))
        .collect()
    )
    out: dict[str, dict[str, list[int]]] = {}
    for key in (BUCKET, *model_bins):
        out[key] = {
            "documents": [0] * bins,
            "bytes": [0] * bins,
            **({"tokens": [0] * bins} if tokens else {}),
        }
    for r in rows:
        out[r["k"]]["documents"][r["b"]] += r["documents"]
        out[r["k"]]["bytes"][r["b"]] += int(r["bytes"] or 0)
        if tokens:
            out[r["k"]]["tokens"][r["b"]] += int(r["tokens"] or 0)
    return {"per_bucket": out.pop(BUCKET), "per_model_bin": out}
