"""The Spark job: WARC files in, a Parquet corpus of extracted text out.

The driver (after cc-pyspark's job classes): it runs the batches, commits them and prints the
summary; the configuration and flags are in :mod:`.config`, input expansion and task
planning in :mod:`.inputs`, the workers' rows in :mod:`.worker`, the output directory and
its commit protocol in :mod:`.output`.  Spark code stays thin: the Python
workers stream each WARC file with :mod:`contentx_udf.warc.reader` and call
:func:`contentx_udf.extract_all` once per HTML page (one parse whatever the number of
methods) inside a single ``mapInArrow`` pass.  A task reads whole files, or pieces of local gzip
WARCs where the plan cuts them so that every core gets an equal share (:func:`.inputs.plan_tasks`,
:mod:`.pieces`: the pieces are checked and their statistics merged before the commit).

Output layout (``--output DIR``)::

    DIR/method=<m>/b<batch>-part-*.parquet  the table, partitioned by method
    DIR/_contentx/files/<batch>/*.pq        one row per input file (counts by WARC type, errors;
                                            Parquet, named so that DIR/**/*.parquet is the table)
    DIR/_contentx/batches/<batch>.json      commit marker of a batch (its input files)
    DIR/_contentx/staging/<batch>/          a batch before its commit (the workers' files named
                                            *.parquet.staged: no glob for *.parquet reads them)
    DIR/_summary.json                       summary of the last run (written last; a run that adds
                                            batches removes it first: no summary, not finished)

Resumability: inputs are processed in batches; a batch is written to a staging directory
and moved into place, then its commit marker is written.  ``--resume`` first deletes every
part file of a batch without a marker (a run killed half-way), then processes only the input
files not listed in any marker — so a killed and resumed run gives exactly the table of an
uninterrupted one.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..errors import UserError, job_main
from ..outputs.table import FILES_METHOD, STAGING, commit_batch, prepare_output, reopen
from ..runtime import class_archive
from ..runtime.java import check_java
from ..runtime.session import spark_session
from ..runtime.store import Store, check_local_output, local_path, output_store
from .config import JobConfig, build_config, build_parser, check_lid_model, output_writer
from .inputs import expand_inputs, files_of_tasks, input_tasks, task_frame
from .pieces import apply_check, check_pieces, write_file_stats
from .progress import Progress, count_files
from .worker import (
    NO_METHOD,
    STATS_COLUMNS,
    WorkerSettings,
    files_schema,
    is_piece,
    make_partition_fn,
    spark_schema,
)

_PYARROW_CODECS = {
    "uncompressed": "none",
    "none": "none",
    "snappy": "snappy",
    "gzip": "gzip",
    "zstd": "zstd",
    "lz4": "lz4",
    "lz4_raw": "lz4",
    "brotli": "brotli",
}


def _parquet_codec(spark) -> str:
    """Spark's configured Parquet codec, as pyarrow names it (zstd when pyarrow lacks it)."""
    codec = (spark.conf.get("spark.sql.parquet.compression.codec", "zstd") or "zstd").lower()
    return _PYARROW_CODECS.get(codec, "zstd")


def ship_lid_model(spark, path: str | None) -> tuple[str | None, bool]:
    """Check a ``--lid-model`` file on the driver and make it reach the executors; returns what
    :class:`WorkerSettings` needs (``lid_model``, ``lid_model_shipped``).

    On a local master the workers run on the driver's machine and read the file where it is (no
    copy of a 1.6 GB model); on a cluster it is shipped with ``SparkContext.addFile`` and each
    worker reads its copy (``SparkFiles.get``)."""
    if path is None:
        return None, False
    check_lid_model(path)
    if workers_share_driver_files(spark):
        return os.path.abspath(path), False
    spark.sparkContext.addFile(os.path.abspath(path))
    return os.path.basename(path), True


def workers_share_driver_files(spark) -> bool:
    """True on a local master (``local[...]``): the Python workers run on the driver's machine."""
    return spark.sparkContext.master.startswith("local")


def worker_memory_mb(config: JobConfig) -> int:
    """Each worker's address-space cap: ``worker_memory_mb``, plus the size of a ``--lid-model``
    (fastText holds the whole model in memory: GlotLID's is 1.6 GB); 0 stays 0 (no cap)."""
    if not config.worker_memory_mb or config.lid_model is None:
        return config.worker_memory_mb
    return config.worker_memory_mb + -(-os.path.getsize(config.lid_model) // (1024 * 1024))


def run_batch(
    spark,
    store: Store,
    files: list[tuple[str, str]],
    config: JobConfig,
    batch_id: str,
    progress: Progress | None = None,
    lid_model: tuple[str | None, bool] = (None, False),
) -> list:
    """Extract one batch of input files and commit it into the output; returns the statistics
    rows of its input files (``warc_filename``, ``scores``, ``error``); ``lid_model``: what
    :func:`ship_lid_model` returned."""
    settings = WorkerSettings(
        config.methods,
        config.params,
        config.max_html_bytes,
        config.rows_per_batch,
        worker_memory_mb(config),
        lid_model=lid_model[0],
        lid_model_shipped=lid_model[1],
    )
    staging = "/".join([config.output.rstrip("/"), *STAGING, batch_id])
    arrow = output_writer(config) == "arrow"
    # files are cut into pieces when the workers write the table (the driver checks the pieces)
    tasks = input_tasks(spark, files, config.num_partitions, config.min_piece_bytes if arrow else 0)

    def extract(tasks: list, schema: Any = STATS_COLUMNS, counted: bool = True) -> Any:
        partition_fn = make_partition_fn(settings)
        if progress is not None and counted:  # (files read again are not counted twice)
            partition_fn = count_files(partition_fn, progress.counters)
        return task_frame(spark, len(tasks)).mapInArrow(files_of_tasks(partition_fn, tasks), schema)

    if arrow:
        # the workers write the Parquet files: no row crosses into the JVM
        settings.write_dir = os.path.abspath(local_path(staging))
        settings.compression = _parquet_codec(spark)
        stats = [row.asDict() for row in extract(tasks).collect()]
        if any(is_piece(start, end) for task in tasks for *_file, start, end in task):
            check = check_pieces(stats, tasks)
            apply_check(settings.write_dir, check)
            stats = list(check.stats)
            if check.redo:  # pieces that did not chain: those files are read again, whole
                again = extract([[(*f, 0, -1)] for f in check.redo], counted=False)
                stats += [row.asDict() for row in again.collect()]
        missing = {name for _loc, name in files} - {row["warc_filename"] for row in stats}
        if missing:  # cannot happen unless a task lost its output silently
            raise RuntimeError(f"no output reported for {len(missing)} input file(s): {sorted(missing)[:3]}")
        write_file_stats(settings.write_dir, stats, files_schema(), settings.compression)
    else:
        table = extract(tasks, spark_schema())
        table.write.mode("overwrite").partitionBy("method").parquet(staging)
        stats = spark.read.parquet(f"{staging}/method={FILES_METHOD}").select(
            "warc_filename", "scores", "error"
        )
        stats = stats.collect()
    commit_batch(store, batch_id, [name for _loc, name in files], extraction(config))
    return stats


def extraction(config: JobConfig) -> dict[str, Any]:
    """What this run extracts with (:func:`..methods.versions.extraction_record`): each batch's
    marker and ``_summary.json`` hold it, the corpus's card reads it."""
    from .. import __version__
    from ..methods.versions import extraction_record

    return extraction_record(__version__, config.methods, config.params)


def summarize(
    config: JobConfig, stats_rows: list, files_total: int, files_skipped: int, elapsed: float
) -> dict[str, Any]:
    """Summary of this run, from the per-file statistics rows (the table is not re-read)."""
    summary: dict[str, Any] = {
        "output": config.output,
        "methods": list(config.methods),
        "lid_model": config.lid_model,
        "input_files": files_total,
        "files_already_done": files_skipped,
        "files_processed": 0,
        "content_records": 0,
        "records_by_warc_type": {},
        "rows_by_method_status": {},
        "file_errors": {},
        "files_failed": 0,
        "elapsed_seconds": round(elapsed, 2),
        "records_per_second": None,
        "content_records_per_second": None,
        "compiled_passes": "on",
        "compiled_language_id": "on",
    }
    if not stats_rows:
        return summary
    counts: Counter = Counter()
    by: dict[str, Counter] = {}
    records = 0
    pure_python = 0
    fasttext_lid = 0
    for row in stats_rows:
        for key, value in (row["scores"] or {}).items():
            if key.startswith("records."):
                counts[key[len("records.") :]] += int(value)
            elif key.startswith("rows."):
                method, status = key[len("rows.") :].rsplit(".", 1)
                by.setdefault(method, Counter())[status] += int(value)
            elif key == "content_records":
                records += int(value)
            elif key == "compiled_passes" and value == 0:
                pure_python += 1
            elif key == "compiled_language_id" and value == 0:
                fasttext_lid += 1
        if row["error"]:
            summary["file_errors"][row["warc_filename"]] = row["error"]
            # failed: nothing of it could be read (empty, not a WARC, unreadable), unlike a file
            # cut short after some records
            summary["files_failed"] += not (row["scores"] or {}).get("content_records")
    summary["files_processed"] = len(stats_rows)
    if pure_python:
        from ..page import compiled

        summary["compiled_passes"] = (
            f"off on {pure_python} of {len(stats_rows)} files: pure Python, slower "
            f"(on the driver: {compiled.status()})"
        )
    if fasttext_lid:
        from ..text.language import lid_status

        summary["compiled_language_id"] = (
            f"off on {fasttext_lid} of {len(stats_rows)} files: fastText's predict, the same "
            f"results, slower (on the driver: {lid_status(config.lid_model)})"
        )
    summary["content_records"] = records
    summary["records_by_warc_type"] = dict(sorted(counts.items()))
    summary["rows_by_method_status"] = {m: dict(sorted(c.items())) for m, c in sorted(by.items())}
    if elapsed > 0:
        summary["records_per_second"] = round(sum(counts.values()) / elapsed, 1)
        summary["content_records_per_second"] = round(records / elapsed, 1)
    return summary


def run(config: JobConfig, spark=None, files: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Run the job; returns the summary (also written to ``OUTPUT/_summary.json``)."""
    started = time.perf_counter()
    if files is None:
        files = expand_inputs(config.inputs, config.input_base_url)
    if spark is None:
        spark = spark_session("contentx-extract-warc", driver_java_options(config), config.verbose)
    lid_model = ship_lid_model(spark, config.lid_model)  # checked before the output is touched
    store = output_store(spark, config.output)
    done = prepare_output(store, config.output, config.overwrite, config.resume)
    todo = [f for f in files if f[1] not in done]
    if todo:
        reopen(store)
    size = config.files_per_batch or len(todo) or 1
    stats_rows = []
    with Progress(
        spark, len(todo), config.progress_seconds, terminal=False if config.verbose else None
    ) as progress:
        for start in range(0, len(todo), size):
            batch_id = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]
            stats_rows += run_batch(
                spark, store, todo[start : start + size], config, batch_id, progress, lid_model
            )
    summary = summarize(config, stats_rows, len(files), len(files) - len(todo), time.perf_counter() - started)
    summary["driver_java_options"] = driver_jvm_flags(spark)
    summary["jvm_class_archive"] = class_archive.status()
    summary["extraction"] = extraction(config)
    store.write_text(json.dumps(summary, indent=2, default=str), "_summary.json")
    return summary


def driver_java_options(config: JobConfig) -> str:
    """The options of a driver JVM the job launches: ``config.driver_java_options`` when the
    Python workers write the table (``writer`` arrow: the JVM only schedules tasks and gathers one
    row per input file), else "" (Spark's writer runs in the JVM: its compiled code's speed counts)."""
    return config.driver_java_options if output_writer(config) == "arrow" else ""


def driver_jvm_flags(spark) -> str:
    """The ``-XX:`` options the driver JVM runs with (e.g. conf/extract.toml's
    ``driver_java_options``), as the JVM reports them; "" when it cannot say.

    The arguments come back joined in one string (one py4j call: walking the Java list from
    Python cost two calls per argument, about 30 ms of every run's summary under load)."""
    try:
        jvm = spark.sparkContext._jvm
        bean = jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
        joined = str(jvm.java.lang.String.join("\n", bean.getInputArguments()))
    except Exception:  # (a Spark Connect session has no JVM here)
        return ""
    return " ".join(arg for arg in joined.split("\n") if arg.startswith("-XX:"))


def print_summary(summary: dict[str, Any], spark=None, show_rows: int = 3, out=None) -> None:
    out = out or sys.stdout
    print("\ncontentx run summary", file=out)
    print(f"  output: {summary['output']}", file=out)
    print(
        f"  input files: {summary['input_files']} (already done: {summary['files_already_done']}, "
        f"processed now: {summary['files_processed']})",
        file=out,
    )
    if summary["records_by_warc_type"]:
        print(
            "  records by WARC type: "
            + ", ".join(f"{k} {v}" for k, v in summary["records_by_warc_type"].items()),
            file=out,
        )
    if summary.get("lid_model"):
        print(f"  language id: {summary['lid_model']}", file=out)
    for method, statuses in summary["rows_by_method_status"].items():
        print(f"  rows {method}: " + ", ".join(f"{s} {n}" for s, n in sorted(statuses.items())), file=out)
    if summary["file_errors"]:
        print(
            f"  file errors: {len(summary['file_errors'])} of {summary['files_processed']} files "
            f"({summary.get('files_failed', 0)} gave no record)",
            file=out,
        )
    for name, err in summary["file_errors"].items():
        print(f"  file error: {name}: {err}", file=out)
    if summary.get("compiled_passes", "on") != "on":
        print(f"  compiled passes: {summary['compiled_passes']}", file=out)
    if summary.get("compiled_language_id", "on") != "on":
        print(f"  compiled language id: {summary['compiled_language_id']}", file=out)
    print(
        f"  elapsed: {summary['elapsed_seconds']} s, records/s: {summary['records_per_second']} "
        f"(content records/s: {summary['content_records_per_second']})",
        file=out,
    )
    if spark is not None and show_rows and summary["files_processed"]:
        from pyspark.sql import functions as F

        first_method = summary["methods"][0] if summary["methods"] else NO_METHOD
        rows = (
            spark.read.parquet(summary["output"])
            .where((F.col("status") == "ok") & (F.col("method") == first_method))
            .select("url", "method", "text_length", F.substring("text", 1, 80).alias("text"))
            .limit(show_rows)
            .collect()
        )
        for row in rows:
            text = (row["text"] or "").replace("\n", " ")
            print(f"  [{row['method']}] {row['url']} ({row['text_length']} chars): {text}…", file=out)


#: The exit code of a run in which every input file processed failed (docs/failures.md).
ALL_FAILED_EXIT = 1


def all_failed(summary: dict[str, Any], err=None) -> int:
    """0, or :data:`ALL_FAILED_EXIT` with one line when every input file this run processed failed
    (none gave a record: the table holds only their error rows)."""
    processed, failed = summary["files_processed"], summary.get("files_failed", 0)
    if not processed or failed < processed:
        return 0
    print(
        f"contentx run: error: every input file failed ({failed} of {processed}: see the file errors "
        "above); the table holds only their error rows",
        file=err or sys.stderr,
    )
    return ALL_FAILED_EXIT


def main(argv: Sequence[str] | None = None) -> int:
    def body(args) -> int:
        config = build_config(args)
        files = expand_inputs(config.inputs, config.input_base_url)
        check_local_output(config.output, replace=config.overwrite or config.resume)
        check_java()
        spark = spark_session("contentx-extract-warc", driver_java_options(config), config.verbose)
        summary = run(config, spark=spark, files=files)
        print_summary(summary, spark, config.show_rows)
        return all_failed(summary)

    return job_main(
        "contentx run",
        argv,
        build_parser(),
        body,
        "interrupted; re-run with --resume to continue",
        rerun="with --resume",
    )


__all__ = ["JobConfig", "UserError", "build_config", "build_parser", "expand_inputs", "main", "run"]
