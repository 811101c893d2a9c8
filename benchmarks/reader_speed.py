"""Reading WARC files in Spark: the job's mapInArrow pass against ``spark.read.format("warc")``.

    python benchmarks/reader_speed.py [--copies 11] [--reps 3] [--methods cectd-ds] [--no-e2e]

Copies ``../shared/warc/fixtures/scrapinghub-scale.warc.gz`` ``--copies`` times (181 HTML
pages each) into a temporary directory and, with one warm SparkSession (master from
``conf/spark-defaults.conf`` or ``spark-submit``, never set here), times:

(a) reading only, every column forced by a ``noop`` write:
    * ``mapInArrow``: a DataFrame of paths, one file per partition, ``mapInArrow`` streaming
      each file (the job's plumbing, without extraction);
    * ``datasource``: ``spark.read.format("warc")`` (:mod:`contentx_udf.datasource`).
    Both run the same worker code (:func:`contentx_udf.spark.datasource.record_batches`) and yield
    the same columns, so the difference is the Spark side of the two approaches.
(b) end to end, extraction with ``--methods`` (default: the default method), Parquet out:
    * ``job.run``: the job as shipped (single mapInArrow pass, batch commit, summary);
    * ``job pass``: the job's mapInArrow pass and Parquet write alone (no commit/summary),
      to tell the job's driver-side bookkeeping from its plumbing;
    * ``datasource + mapInArrow``: the data source, then a ``mapInArrow`` stage building the
      job's output rows with :func:`contentx_udf.worker.rows_for_record` (so ``extract_all``),
      written like the job (Parquet partitioned by ``method``).

Each variant runs ``--reps`` times, interleaved (A B C, A B C, ...) so that load from other
processes hits them alike; the best time counts, the spread (max/min) says how noisy it was.
The last line (``RESULT ...``) holds every figure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import REPO, SCALE_FIXTURE, scale_copies

sys.path.insert(0, str(REPO))

from contentx_udf import DEFAULT_METHOD  # noqa: E402
from contentx_udf.runtime.session import prepare_driver  # noqa: E402
from contentx_udf.spark import config as job_config  # noqa: E402
from contentx_udf.spark import datasource, job, worker  # noqa: E402

# --- the variants ------------------------------------------------------------------------


def paths_df(spark, files: list[str]):
    """The job's input DataFrame: (location, warc_filename), one file per partition."""
    pairs = [(f, f) for f in files]
    return spark.sparkContext.parallelize(pairs, len(pairs)).toDF("location string, warc_filename string")


def read_with_map_in_arrow(spark, files: list[str], max_html_bytes: int):
    """The job's approach without extraction: paths + mapInArrow yielding the record rows."""
    options = datasource.WarcReaderOptions(max_html_bytes=max_html_bytes)

    def read_files(batches):
        schema = datasource.arrow_schema()
        for batch in batches:
            data = batch.to_pydict()
            for location, name in zip(data["location"], data["warc_filename"], strict=True):
                yield from datasource.record_batches(location, name, schema, options)

    return paths_df(spark, files).mapInArrow(read_files, datasource.record_schema())


def read_with_datasource(spark, files: list[str], max_html_bytes: int):
    return spark.read.format("warc").option("maxHtmlBytes", max_html_bytes).load(files)


def make_extract_fn(settings: worker.WorkerSettings):
    """mapInArrow stage after the data source: record rows in, the job's output rows out."""

    def extract_batches(batches):
        from contentx_udf.runtime.worker_env import prepare_worker
        from contentx_udf.warc.row import WarcRow

        prepare_worker(settings.worker_memory_mb)
        schema = worker.arrow_schema()
        buffer: list[dict] = []
        for batch in batches:
            for r in batch.to_pylist():
                payload = r.pop("payload")
                notes = r.pop("notes")
                r.pop("crawl")
                r.pop("warc_segment")
                rec = WarcRow(
                    **r,
                    payload=payload,
                    is_html=r["status"] == "ok" and payload is not None,
                    notes=notes.split("; ") if notes else [],
                )
                buffer.extend(worker.rows_for_record(rec, r["warc_filename"], settings))
                if len(buffer) >= settings.rows_per_batch:
                    yield worker.rows_to_batch(buffer, schema)
                    buffer = []
        if buffer:
            yield worker.rows_to_batch(buffer, schema)

    return extract_batches


def e2e_job_run(spark, files, out, methods, max_html_bytes) -> None:
    config = job_config.JobConfig(inputs=files, output=out, methods=methods, max_html_bytes=max_html_bytes)
    job.run(config, spark=spark, files=[(f, f) for f in files])


def e2e_job_pass(spark, files, out, methods, max_html_bytes) -> None:
    config = job_config.JobConfig(inputs=files, output=out, methods=methods, max_html_bytes=max_html_bytes)
    settings = worker.WorkerSettings(
        methods, {}, max_html_bytes, config.rows_per_batch, config.worker_memory_mb
    )
    table = paths_df(spark, files).mapInArrow(worker.make_partition_fn(settings), worker.spark_schema())
    table.write.mode("overwrite").partitionBy("method").parquet(out)


def e2e_datasource(spark, files, out, methods, max_html_bytes) -> None:
    config = job_config.JobConfig(inputs=files, output=out, methods=methods, max_html_bytes=max_html_bytes)
    settings = worker.WorkerSettings(
        methods, {}, max_html_bytes, config.rows_per_batch, config.worker_memory_mb
    )
    records = read_with_datasource(spark, files, max_html_bytes)
    table = records.mapInArrow(make_extract_fn(settings), worker.spark_schema())
    table.write.mode("overwrite").partitionBy("method").parquet(out)


# --- timing ------------------------------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and all its descendants: the driver, the JVM,
    the Python daemon and workers, and every child they reaped (``cutime``/``cstime``).

    Less sensitive than wall time to other processes competing for the cores, so it shows
    what each approach costs even when the machine is busy.
    """
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2 :].split()
        ppid = int(fields[1])
        cpu = sum(int(x) for x in fields[11:15]) / _TICK  # utime stime cutime cstime
        stats[int(entry)] = (ppid, cpu)
    children: dict[int, list[int]] = {}
    for pid, (ppid, _cpu) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0.0))[1]
        todo.extend(children.get(pid, []))
    return total


def measure(variants: dict[str, Callable[[int], object]], reps: int) -> dict[str, list[tuple[float, float]]]:
    """(wall seconds, CPU seconds) of every rep of every variant, reps interleaved."""
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for rep in range(reps):
        for name, fn in variants.items():
            cpu0, wall0 = tree_cpu_seconds(), time.perf_counter()
            fn(rep)
            wall, cpu = time.perf_counter() - wall0, tree_cpu_seconds() - cpu0
            out[name].append((wall, cpu))
            print(f"  rep {rep + 1}/{reps} {name}: {wall:.2f} s wall, {cpu:.2f} s CPU", flush=True)
    return out


def report(name: str, runs: list[tuple[float, float]], records: int) -> dict[str, float]:
    walls = [w for w, _ in runs]
    cpus = [c for _, c in runs]
    best, cpu = min(walls), min(cpus)
    figures = {
        "rps": records / best,
        "spread": max(walls) / best - 1,
        "cpu_ms": 1000 * cpu / records,
        "cpu_spread": max(cpus) / cpu - 1,
    }
    print(
        f"{name:28s} best {best:6.2f} s = {figures['rps']:6.1f} records/s "
        f"(median {statistics.median(walls):.2f} s, worst {max(walls):.2f} s, "
        f"spread {figures['spread']:.0%}); "
        f"CPU (least) {figures['cpu_ms']:.2f} ms/record (spread {figures['cpu_spread']:.0%})"
    )
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, default=11)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--methods", default=DEFAULT_METHOD)
    parser.add_argument("--max-html-bytes", type=int, default=job_config.DEFAULT_MAX_HTML_BYTES)
    parser.add_argument("--no-e2e", action="store_true", help="only the read-only comparison")
    args = parser.parse_args()
    methods = job_config.parse_methods(args.methods)
    if not SCALE_FIXTURE.exists():
        sys.exit(f"missing {SCALE_FIXTURE}")

    prepare_driver()
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.appName("contentx-reader-speed")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    datasource.register(spark)
    cores = spark.sparkContext.defaultParallelism
    load_before = os.getloadavg()

    with tempfile.TemporaryDirectory(prefix="contentx-reader-bench-") as tmp:
        files = scale_copies(args.copies, Path(tmp) / "in")
        mhb = args.max_html_bytes

        # record count and a check that both readers give the same rows (not timed)
        ds_df = read_with_datasource(spark, files, mhb)
        mia_df = read_with_map_in_arrow(spark, files, mhb)
        records = ds_df.count()
        key = ["warc_filename", "warc_record_offset", "status"]
        assert mia_df.count() == records
        assert ds_df.select(key).exceptAll(mia_df.select(key)).count() == 0
        print(f"{args.copies} files, {records} content records, {cores} cores, methods {','.join(methods)}")

        # warm-up: Python workers started, modules imported, by every variant
        read_with_map_in_arrow(spark, files[:2], mhb).write.format("noop").mode("overwrite").save()
        read_with_datasource(spark, files[:2], mhb).write.format("noop").mode("overwrite").save()

        print("\n(a) read only, noop write of every column")
        read_times = measure(
            {
                "mapInArrow": lambda rep: (
                    read_with_map_in_arrow(spark, files, mhb).write.format("noop").mode("overwrite").save()
                ),
                "datasource": lambda rep: (
                    read_with_datasource(spark, files, mhb).write.format("noop").mode("overwrite").save()
                ),
            },
            args.reps,
        )
        results = {
            "read_mapinarrow": report("read mapInArrow", read_times["mapInArrow"], records),
            "read_datasource": report("read datasource", read_times["datasource"], records),
        }
        ratio = results["read_datasource"]["rps"] / results["read_mapinarrow"]["rps"]
        cpu_ratio = results["read_datasource"]["cpu_ms"] / results["read_mapinarrow"]["cpu_ms"]
        print(f"datasource / mapInArrow, read only: records/s x{ratio:.2f}, CPU per record x{cpu_ratio:.2f}")
        ratios = {"read_ratio": ratio, "read_cpu_ratio": cpu_ratio}

        if not args.no_e2e:
            out = Path(tmp) / "out"

            def variant(fn):
                def go(rep: int) -> None:
                    target = out / f"{fn.__name__}-{rep}"
                    try:
                        fn(spark, files, str(target), methods, mhb)
                    finally:
                        shutil.rmtree(target, ignore_errors=True)

                return go

            for fn in (e2e_job_run, e2e_job_pass, e2e_datasource):  # warm-up on two files
                fn(spark, files[:2], str(out / f"warm-{fn.__name__}"), methods, mhb)
            # same rows from both paths (payload_cut_bytes aside: the data source has no payload_length)
            check_job, check_ds = str(out / "check-job"), str(out / "check-ds")
            e2e_job_pass(spark, files[:2], check_job, methods, mhb)
            e2e_datasource(spark, files[:2], check_ds, methods, mhb)
            cols = ["warc_filename", "warc_record_offset", "method", "status", "text_length"]
            a = spark.read.parquet(check_job).where("method != '_files'").select(cols)
            b = spark.read.parquet(check_ds).select(cols)
            assert a.count() == b.count() and a.exceptAll(b).count() == 0, "e2e outputs differ"

            print(f"\n(b) end to end, extraction ({','.join(methods)}), Parquet out")
            e2e_times = measure(
                {
                    "job.run": variant(e2e_job_run),
                    "job pass": variant(e2e_job_pass),
                    "datasource + mapInArrow": variant(e2e_datasource),
                },
                args.reps,
            )
            results["e2e_jobrun"] = report("e2e job.run", e2e_times["job.run"], records)
            results["e2e_jobpass"] = report("e2e job pass", e2e_times["job pass"], records)
            results["e2e_datasource"] = report(
                "e2e datasource + mapInArrow", e2e_times["datasource + mapInArrow"], records
            )
            for base in ("jobrun", "jobpass"):
                ratio = results["e2e_datasource"]["rps"] / results[f"e2e_{base}"]["rps"]
                cpu_ratio = results["e2e_datasource"]["cpu_ms"] / results[f"e2e_{base}"]["cpu_ms"]
                print(
                    f"datasource + mapInArrow / {base}: records/s x{ratio:.2f}, "
                    f"CPU per record x{cpu_ratio:.2f}"
                )
                ratios[f"e2e_ratio_vs_{base}"] = ratio
                ratios[f"e2e_cpu_ratio_vs_{base}"] = cpu_ratio

    load_after = os.getloadavg()
    print(f"\nload average (1 min) before {load_before[0]:.1f}, after {load_after[0]:.1f} on {cores} cores")
    spark.stop()
    figures = " ".join(
        f"{name}_{key}={value:.2f}" for name, fig in results.items() for key, value in fig.items()
    )
    print(
        f"RESULT files={args.copies} records={records} cores={cores} reps={args.reps} {figures} "
        + " ".join(f"{k}={v:.2f}" for k, v in ratios.items())
        + f" load_before={load_before[0]:.1f} load_after={load_after[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
