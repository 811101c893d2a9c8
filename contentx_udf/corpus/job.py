"""The corpus job's driver: extraction tables in, a filtered and deduplicated corpus and a report out.

Thin: the filters are in :mod:`.filters`, duplicate removal in :mod:`.dedup`, the report in
:mod:`.report`; this module wires them and only ever collects aggregates to the driver.

Output (``--output DIR``, a local directory)::

    DIR/documents/*.parquet   the kept documents (see README "Building a corpus")
    DIR/_report.json          counts per filter, languages, lengths, hosts, cluster sizes
    DIR/report.md             the same for people, with DIR/plots/*.png
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from ..errors import UserError, job_main
from ..spark.inputs import is_remote, local_path
from ..spark.worker_env import check_java, spark_session
from .config import CorpusConfig, build_config, build_parser
from .dedup import exact_dedup, near_dedup, with_preference
from .filters import FILTERS, check_method, read_tables, with_drop_reason
from .report import LENGTH_BINS, length_bin_labels, summary_lines, write_report

#: Columns of the kept-documents table.
DOCUMENT_COLUMNS = (
    "url",
    "host",
    "fetch_time",
    "language",
    "language_score",
    "title",
    "text",
    "text_length",
    "text_hash",
    "warc_filename",
    "warc_record_offset",
    "warc_record_length",
    "duplicate_count",
)
TOP_HOSTS = 20


def prepare_output(config: CorpusConfig) -> str:
    if is_remote(config.output):
        raise UserError(
            f"--output must be a local directory (the report is written locally): {config.output}"
        )
    out = os.path.abspath(local_path(config.output))
    if os.path.exists(out):
        if not os.path.isdir(out):
            raise UserError(f"--output {config.output} is a file")
        if os.listdir(out):
            if not config.overwrite:
                raise UserError(
                    f"--output {config.output} exists and is not empty; pass --overwrite to replace it"
                )
            shutil.rmtree(out)
    os.makedirs(out, exist_ok=True)
    return out


def _length_bin():
    from pyspark.sql import functions as F

    labels = length_bin_labels()
    expr = F.lit(labels[-1])
    for high, label in reversed(list(zip(LENGTH_BINS, labels, strict=False))):
        expr = F.when(F.col("text_length") < high, F.lit(label)).otherwise(expr)
    return expr


def run(config: CorpusConfig, spark) -> dict[str, Any]:
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    started = time.perf_counter()
    out = prepare_output(config)
    tables = read_tables(spark, config.inputs)
    check_method(tables, config.method)

    rows = with_drop_reason(tables, config).persist(StorageLevel.MEMORY_AND_DISK)
    by_reason = {r["drop"]: r["count"] for r in rows.groupBy("drop").count().collect()}
    input_rows = sum(by_reason.values())
    dropped = {name: by_reason.get(name, 0) for name in FILTERS}
    passed = with_preference(rows.where(F.col("drop").isNull()), config.keep)
    passed_count = by_reason.get(None, 0)

    docs = passed.withColumn("duplicate_count", F.lit(1).cast("long"))
    exact_kept = passed_count
    if config.dedup in ("exact", "near"):
        docs = exact_dedup(passed).persist(StorageLevel.MEMORY_AND_DISK)
        exact_kept = docs.count()
    dropped["exact_duplicate"] = passed_count - exact_kept
    if config.dedup == "near":
        docs = near_dedup(docs, config.near_threshold)

    documents = os.path.join(out, "documents")
    docs.withColumnRenamed("url_host_name", "host").select(*DOCUMENT_COLUMNS).write.parquet(documents)
    rows.unpersist()

    kept_df = spark.read.parquet(documents)
    languages = [
        {"language": r["language"], "documents": r["documents"], "characters": int(r["characters"] or 0)}
        for r in kept_df.groupBy("language")
        .agg(F.count("*").alias("documents"), F.sum("text_length").alias("characters"))
        .orderBy(F.desc("documents"), "language")
        .collect()
    ]
    kept = sum(x["documents"] for x in languages)  # (the language groups include null)
    dropped["near_duplicate"] = exact_kept - kept
    hist_counts = {
        r["bin"]: r["count"] for r in kept_df.groupBy(_length_bin().alias("bin")).count().collect()
    }
    hosts = kept_df.groupBy("host").count().orderBy(F.desc("count"), "host").limit(TOP_HOSTS).collect()
    sizes = kept_df.groupBy("duplicate_count").count().orderBy("duplicate_count").collect()
    elapsed = time.perf_counter() - started
    report = {
        "output": config.output,
        "config": asdict(config),
        "input_rows": input_rows,
        "dropped": dropped,
        "kept": kept,
        "kept_characters": sum(x["characters"] for x in languages),
        "languages": languages,
        "text_length_histogram": {label: hist_counts.get(label, 0) for label in length_bin_labels()},
        "top_hosts": [{"host": r["host"], "documents": r["count"]} for r in hosts],
        "cluster_sizes": {int(r["duplicate_count"]): r["count"] for r in sizes},
        "elapsed_seconds": round(elapsed, 2),
        "records_per_second": round(input_rows / elapsed, 1) if elapsed > 0 else None,
    }
    return write_report(report, out)


def main(argv: Sequence[str] | None = None) -> int:
    def body(args) -> int:
        config = build_config(args)
        check_java()
        report = run(config, spark_session("contentx-build-corpus"))
        print("\n" + "\n".join(summary_lines(report)))
        return 0

    return job_main("build_corpus", argv, build_parser(), body)
