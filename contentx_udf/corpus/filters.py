"""Reading extraction tables and the corpus filters (Spark, column expressions only).

Every input row of the chosen method gets a ``drop`` column: the first filter it fails, in the
order of :data:`FILTERS`, or null when it passes them all; the job counts the rows per value
in one aggregation, so kept + dropped = input by construction.
"""

from __future__ import annotations

import os

from ..errors import UserError
from ..evaluation import PAGE_TYPES
from ..spark.inputs import is_remote, local_path
from .config import CorpusConfig

#: Filters in the order they are applied (the name is the ``drop`` value and the report's key).
FILTERS = ("status", "language", "min_chars", "min_confidence", "page_type")

#: Columns an extraction table must have for the corpus job.
REQUIRED_COLUMNS = (
    "url",
    "url_host_name",
    "fetch_time",
    "warc_filename",
    "warc_record_offset",
    "warc_record_length",
    "method",
    "title",
    "text",
    "text_length",
    "scores",
    "status",
    "language",
    "language_score",
    "text_hash",
)


def read_tables(spark, inputs: list[str]):
    """The union of the extraction tables ``inputs``; a path that is not one is a UserError."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    frames = []
    for path in inputs:
        if not is_remote(path):
            local = local_path(path)
            if not os.path.isdir(local):
                missing = not os.path.exists(local)
                raise UserError(f"{path}: no such table directory" if missing else f"{path}: not a directory")
            if not any(n.startswith("method=") for n in os.listdir(local)):
                raise UserError(f"{path} is not an extraction table (no method=<m> partition directories)")
        try:
            df = spark.read.parquet(path)
        except (AnalysisException, Py4JJavaError) as exc:
            reason = str(exc).splitlines()[0][:200]
            raise UserError(f"{path} is not an extraction table (not a Parquet table: {reason})") from None
        missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
        if missing:
            raise UserError(
                f"{path} is not an extraction table of this version "
                f"(missing column(s): {', '.join(missing)}); "
                "write it with `contentx run` / jobs/extract_warc.py"
            )
        frames.append(df.select(*REQUIRED_COLUMNS).withColumn("_input", F.lit(len(frames))))
    out = frames[0]
    for df in frames[1:]:
        out = out.unionByName(df)
    return out


def check_method(df, method: str) -> None:
    """UserError unless ``method`` has rows in the tables (``method`` is the partition column)."""
    present = sorted(r["method"] for r in df.select("method").distinct().collect())
    if method not in present:
        raise UserError(
            f"method {method!r} is not in the input table(s); methods there: {', '.join(present) or 'none'}"
        )


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
