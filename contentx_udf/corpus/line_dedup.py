"""``--line-dedup`` on Spark: which lines repeat across the crawl (one aggregation over line keys),
and the report's counts of what was removed.  The hashing and removal are :mod:`.lines` (pure);
this module only wires them into DataFrames, and only hashes and counts reach the driver.

1. An Arrow UDF gives every document that passed the column filters the distinct keys of its
   lines of at least ``min_chars`` characters (:func:`.lines.document_keys`; the host is mixed
   into the key for the ``host`` scope).  They are exploded to ``(key, doc)`` rows, ``doc`` a
   64-bit hash of the document's ``text_hash`` (copies of one page count once), and their distinct
   documents counted per key (one shuffle of the pairs, made distinct within each task first):
   the keys of at least ``min_docs`` documents are the frequent lines.  Spark's
   hash aggregation spills to disk, so a line in 100,000 documents costs 100,000 rows of 16 bytes
   and nothing is quadratic in a group's size.
2. The frequent keys are written under the run's staging directory.  When there are at most
   :data:`BROADCAST_KEYS` of them (8 bytes each) they are collected as one sorted uint64 array
   and shipped with the first pass's UDF, which removes the lines in the same pass as the quality
   filters (:mod:`.per_document`).  Otherwise the ``(row, key)`` rows are computed again, joined
   with the frequent keys (Spark broadcasts or shuffles by size), gathered per input row into a
   list (``_line_keys``) that joins the input rows, and the UDF removes each row's listed lines.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa  # the Arrow UDF's type hints name it

from .lines import LineSettings, document_keys

#: Frequent keys shipped with the pass's UDF when there are at most this many (16 MB).
BROADCAST_KEYS = 2_000_000
#: Hosts and example lines in the report.
TOP_HOSTS = 10
TOP_EXAMPLES = 10


@dataclass
class LinePlan:
    """What the pass needs: its settings (with the frequent keys when shipped), the rows (with the
    ``_line_keys`` column when joined), and the number of frequent keys found."""

    settings: object  # PassSettings
    rows: object  # DataFrame
    frequent_keys: int
    joined: bool


def _keys_udf(settings: LineSettings):
    from pyspark.sql.functions import arrow_udf

    @arrow_udf("array<bigint>")
    def line_keys(text: pa.Array, host: pa.Array) -> pa.Array:
        return document_keys(text, host, settings)

    return line_keys


def row_key():
    """A 64-bit id of an input row (its location, URL and text): the join key of the listed path."""
    from pyspark.sql import functions as F

    return F.xxhash64("_input", "warc_filename", "warc_record_offset", "url", "text_hash")


def plan(rows, pass_settings, staging_uri: str, broadcast_keys: int | None = None) -> LinePlan:
    """Find the frequent lines of ``rows`` (the input with its ``drop`` column) and say how the
    pass removes them (see the module doc); the frequent keys are written under ``staging_uri``."""
    from pyspark.sql import functions as F

    settings: LineSettings = pass_settings.lines
    spark = rows.sparkSession
    keyed = rows.where(F.col("drop").isNull() & F.col("text").isNotNull()).select(
        row_key().alias("_row"),
        F.xxhash64(F.coalesce("text_hash", "url")).alias("doc"),
        F.explode(_keys_udf(settings)("text", "url_host_name")).alias("key"),
    )
    (
        keyed.groupBy("key")
        .agg(F.countDistinct("doc").alias("documents"))  # one shuffle of (key, doc), pre-aggregated
        .where(F.col("documents") >= settings.min_docs)
        .select("key")
        .write.mode("overwrite")
        .parquet(staging_uri)
    )
    frequent = spark.read.parquet(staging_uri)
    found = frequent.count()
    if found <= (BROADCAST_KEYS if broadcast_keys is None else broadcast_keys):
        keys = np.array([r["key"] for r in frequent.collect()], dtype=np.int64).view(np.uint64)
        return LinePlan(replace(pass_settings, frequent=np.sort(keys)), rows, found, joined=False)
    lists = (
        keyed.select("_row", "key")
        .join(frequent, "key", "left_semi")
        .groupBy("_row")
        .agg(F.collect_list("key").alias("_line_keys"))
    )
    joined = rows.withColumn("_row", row_key()).join(lists, "_row", "left").drop("_row")
    return LinePlan(replace(pass_settings, frequent=None), joined, found, joined=True)


def summary(table, top_hosts: int = TOP_HOSTS, top_examples: int = TOP_EXAMPLES) -> dict:
    """The report's counts from the staged pass (``lines_removed``, ``line_chars_removed``,
    ``line_example`` per document): totals, the hosts that lost most lines (each with an example
    line) and the most common first removed lines.  Aggregations only."""
    from pyspark.sql import functions as F

    changed = table.where(F.col("lines_removed") > 0)
    totals = changed.agg(
        F.count("*").alias("documents"),
        F.sum("lines_removed").alias("lines"),
        F.sum("line_chars_removed").alias("characters"),
    ).first()
    hosts = (
        changed.groupBy("host")
        .agg(
            F.count("*").alias("documents"),
            F.sum("lines_removed").alias("lines"),
            F.sum("line_chars_removed").alias("characters"),
            F.min("line_example").alias("example"),
        )
        .orderBy(F.desc("lines"), "host")
        .limit(top_hosts)
        .collect()
    )
    examples = (
        changed.groupBy("line_example")
        .count()
        .orderBy(F.desc("count"), "line_example")
        .limit(top_examples)
        .collect()
    )
    return {
        "documents_changed": int(totals["documents"] or 0),
        "lines_removed": int(totals["lines"] or 0),
        "characters_removed": int(totals["characters"] or 0),
        "top_hosts": [
            {
                "host": r["host"],
                "documents": r["documents"],
                "lines": int(r["lines"]),
                "characters": int(r["characters"]),
                "example": r["example"],
            }
            for r in hosts
        ],
        "examples": [{"line": r["line_example"], "documents": r["count"]} for r in examples],
    }
