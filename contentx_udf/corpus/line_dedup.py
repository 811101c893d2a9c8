"""``--line-dedup`` on Spark: which lines repeat across the crawl (one aggregation over line keys),
and the report's counts of what was removed.  The hashing and removal are :mod:`.lines` (pure);
this module only wires them into DataFrames, and only hashes and counts reach the driver.

1. Each input partition's texts that passed the column filters go through ``mapInArrow``: the
   distinct keys of every document's lines of at least ``min_chars`` characters
   (:func:`.lines.document_keys`; the host is mixed into the key for the ``host`` scope), paired
   with ``doc``, a 64-bit hash of the document's ``text_hash`` (copies of one page count once);
   the partition's pairs made distinct in numpy, at most ``min_docs`` documents kept per key
   (:func:`.lines.few_documents`: enough to tell whether a key reaches ``min_docs``), and packed
   into one row per bucket of keys (``key mod buckets``, as many buckets as input partitions).
   ``groupBy(bucket).applyInArrow`` then gives each bucket's keys of at least ``min_docs``
   distinct documents (:func:`.lines.frequent_keys`): the frequent lines, the same as a
   ``countDistinct`` of the pairs per key, but one shuffled row per (partition, bucket) instead
   of one per pair.  A bucket holds about one partition's pairs (16 bytes each) and a line in
   100,000 documents at most ``min_docs`` pairs per partition: memory is bounded by the input
   partition's size and nothing is quadratic in a group's size.
2. The frequent keys are written under the run's staging directory.  When there are at most
   :data:`BROADCAST_KEYS` of them (8 bytes each) they are collected as one sorted uint64 array
   and shipped with the first pass's UDF, which removes the lines in the same pass as the quality
   filters (:mod:`.per_document`).  Otherwise the ``(row, key)`` rows are computed again, joined
   with the frequent keys (Spark broadcasts or shuffles by size), gathered per input row into a
   list (``_line_keys``) that joins the input rows, and the UDF removes each row's listed lines.

The keys are hashed and the lines removed compiled (:mod:`._lines`); see docs/curation.md for the
cost at 1,000,000 documents.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa  # the Arrow UDF's type hints name it

from .lines import LineSettings, document_keys, few_documents, frequent_keys

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


def _pairs_body(settings: LineSettings, buckets: int):
    """``mapInArrow`` body: one input partition's texts to its distinct ``(key, doc)`` pairs, at most
    ``min_docs`` documents per key (:func:`.lines.few_documents`), as one row per bucket of keys
    (``key mod buckets``) holding the bucket's keys and documents as packed 64-bit arrays."""

    def run(batches):
        keys, docs = [], []
        for batch in batches:
            listed = document_keys(batch.column("text"), batch.column("url_host_name"), settings)
            keys.append(listed.values.to_numpy(zero_copy_only=False).view(np.uint64))
            per_doc = np.diff(listed.offsets.to_numpy())
            docs.append(np.repeat(batch.column("doc").to_numpy(zero_copy_only=False), per_doc))
        if not keys:
            return
        key, doc = few_documents(np.concatenate(keys), np.concatenate(docs), settings.min_docs)
        bucket = (key % np.uint64(buckets)).astype(np.int64)
        order = np.argsort(bucket, kind="stable")
        key, doc, bucket = key[order], doc[order], bucket[order]
        bounds = np.searchsorted(bucket, np.arange(buckets + 1))
        present = np.flatnonzero(np.diff(bounds))
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(present, pa.int32()),
                pa.array([key[bounds[b] : bounds[b + 1]].tobytes() for b in present], pa.binary()),
                pa.array([doc[bounds[b] : bounds[b + 1]].tobytes() for b in present], pa.binary()),
            ],
            names=["bucket", "keys", "docs"],
        )

    return run


def _frequent_body(min_docs: int):
    """``applyInArrow`` body: one bucket's rows (one per input partition) to its keys of at least
    ``min_docs`` distinct documents (:func:`.lines.frequent_keys`)."""

    def run(table: pa.Table) -> pa.Table:
        keys = np.frombuffer(b"".join(table.column("keys").to_pylist()), dtype=np.uint64)
        docs = np.frombuffer(b"".join(table.column("docs").to_pylist()), dtype=np.int64)
        found = frequent_keys(keys, docs, min_docs)
        return pa.table({"key": pa.array(found.view(np.int64), pa.int64())})

    return run


def plan(rows, pass_settings, staging_uri: str, broadcast_keys: int | None = None) -> LinePlan:
    """Find the frequent lines of ``rows`` (the input with its ``drop`` column) and say how the
    pass removes them (see the module doc); the frequent keys are written under ``staging_uri``."""
    from pyspark.sql import functions as F

    settings: LineSettings = pass_settings.lines
    spark = rows.sparkSession
    counted = rows.where(F.col("drop").isNull() & F.col("text").isNotNull())
    source = counted.select("text", "url_host_name", F.xxhash64(F.coalesce("text_hash", "url")).alias("doc"))
    buckets = max(1, source.rdd.getNumPartitions())  # a bucket holds about one partition's pairs
    (
        source.mapInArrow(_pairs_body(settings, buckets), "bucket int, keys binary, docs binary")
        .groupBy("bucket")
        .applyInArrow(_frequent_body(settings.min_docs), "key long")
        .write.mode("overwrite")
        .parquet(staging_uri)
    )
    frequent = spark.read.parquet(staging_uri)
    found = frequent.count()
    if found <= (BROADCAST_KEYS if broadcast_keys is None else broadcast_keys):
        keys = np.array([r["key"] for r in frequent.collect()], dtype=np.int64).view(np.uint64)
        return LinePlan(replace(pass_settings, frequent=np.sort(keys)), rows, found, joined=False)
    keyed = counted.select(
        row_key().alias("_row"), F.explode(_keys_udf(settings)("text", "url_host_name")).alias("key")
    )
    lists = (
        keyed.join(frequent, "key", "left_semi")
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
