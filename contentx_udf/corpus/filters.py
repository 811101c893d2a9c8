"""The corpus job's column filters (Spark, column expressions only).

Every input row of the chosen method gets a ``drop`` column: the first filter it fails, in the
order of :data:`FILTERS`, or null when it passes them all; the job counts the rows per value
in one aggregation, so kept + dropped = input by construction.
"""

from __future__ import annotations

from ..settings import PAGE_TYPES
from .config import CorpusConfig

#: Filters in the order they are applied (the name is the ``drop`` value and the report's key).
FILTERS = ("status", "language", "min_chars", "min_confidence", "page_type")


def with_drop_reason(df, config: CorpusConfig):
    """``df`` restricted to ``config.method``, with the ``drop`` column (first failed filter)."""
    from pyspark.sql import functions as F

    rows = df.where(F.col("method") == config.method)
    tests = [("status", F.col("status") != "ok")]
    if config.languages:
        tests.append(("language", ~F.coalesce(F.col("language").isin(*config.languages), F.lit(False))))
    if config.min_chars:
        tests.append(("min_chars", F.coalesce(F.col("text_length"), F.lit(0)) < config.min_chars))
    if config.min_confidence is not None:
        # only the methods that report a confidence (combined) are filtered; the others pass
        confidence = F.col("scores").getItem("content_confidence")
        tests.append(("min_confidence", confidence.isNotNull() & (confidence < config.min_confidence)))
    if config.page_types:
        # the most probable type: the greatest (probability, type) pair; rows without the scores pass
        ranked = F.greatest(
            *(
                F.struct(F.col("scores").getItem(f"page_type_{t}").alias("p"), F.lit(t).alias("t"))
                for t in PAGE_TYPES
            )
        )
        tests.append(("page_type", ranked["p"].isNotNull() & ~ranked["t"].isin(*config.page_types)))
    drop = F.lit(None).cast("string")
    for name, failed in reversed(tests):
        drop = F.when(failed, F.lit(name)).otherwise(drop)
    return rows.withColumn("drop", drop)
