"""Spark job throughput against a plain Python loop over the same records.

    python benchmarks/job_speed.py [--copies 11] [--methods cectd-ds] [--writer auto] [--hostile]
                                   [--loop-language] [--jvm-defaults] [--rounds 3]

Copies ``../shared/warc/fixtures/scrapinghub-scale.warc.gz`` ``--copies`` times (181 pages
each; 11 copies ~ 2,000 pages) into a temporary directory, then measures on this machine:
  * the plain loop: ``multiprocessing`` with one process per core, each reading whole files
    with contentx_udf.warc and calling contentx_udf.extract_all — the same library calls as
    the job, without Spark (``--loop-language``: and a second loop that also runs the language id
    and text hash the job adds to every ``ok`` row);
  * the Spark job (``contentx_udf.job.run``, embedded ``local[*]``; local gzip WARCs are read
    in pieces where the plan needs it, conf/extract.toml ``min_piece_bytes``; a second run reads
    every file whole, ``ratio_whole_files``), timed from the start of
    the run to the committed output (the session is started and warmed up first: a run over
    one file per core, so that every core's Python worker is started and has imported the
    package, as the loop's processes are forked from this interpreter after its imports; until
    2026-11-27 the warm-up read one file, which started one worker, and the timed run paid the
    second worker's start, 0.2-0.5 s of imports and set-up under load).
Each of ``--rounds`` rounds runs the loop, the job and the job reading whole files back to back
(the loop's processes are forked from this interpreter, the session's idle JVM beside them); the
figures are the rounds' medians (until 2026-11-28 one round, the loop before the session started:
this machine's speed drifts by a few per cent between minutes, as much as the margin to the goal).
Prints records/s of both, the ratio, and the peak RSS (VmHWM) of the Spark Python workers (of
this interpreter: other Spark users' workers on the machine are left out);
the last line holds every figure.  ``--hostile`` also runs the hostile fixture through the
job and reports the workers' peak RSS there.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# The loop's processes get what Spark gives its Python workers (PythonRunner sets OMP_NUM_THREADS to
# spark.task.cpus, 1): single-threaded BLAS.  Before 2026-11-28 the loop ran with OpenBLAS's default
# (a thread per core: its idle threads spin after each numpy call and took the other process's
# core), 1-2 % slower than it need be, to the job's advantage; set before numpy is imported.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from _common import FIXTURES, REPO, SCALE_FIXTURE, scale_copies  # noqa: E402

sys.path.insert(0, str(REPO))

from contentx_udf import extract_all  # noqa: E402
from contentx_udf.spark.config import JobConfig, configured_java_options  # noqa: E402
from contentx_udf.spark.job import driver_java_options, run  # noqa: E402
from contentx_udf.text.language import detect_language, text_hash  # noqa: E402
from contentx_udf.warc.reader import iter_warc_rows  # noqa: E402


def loop_file(args: tuple[str, tuple[str, ...], bool]) -> int:
    path, methods, language = args
    records = 0
    for rec in iter_warc_rows(path, max_html_bytes=1_048_576):
        records += 1
        if rec.status == "ok" and rec.is_html:
            results = extract_all(rec.payload, methods, url=rec.url, content_type=rec.http_content_type)
            if language:  # what the job adds to every ok row
                for ex in results.values():
                    if ex.status == "ok":
                        detect_language(ex.text)
                        text_hash(ex.text)
    return records


def plain_loop(
    files: list[str], methods: tuple[str, ...], procs: int, language: bool = False
) -> tuple[int, float]:
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(procs) as pool:
        records = sum(pool.map(loop_file, [(f, methods, language) for f in files], chunksize=1))
    return records, time.perf_counter() - started


def python_workers_peak_rss_mb() -> float:
    """Largest VmHWM among the PySpark Python worker processes of this Python (other users' Spark
    workers on a shared machine run other interpreters and are not counted)."""
    peak = 0
    python = os.path.abspath(os.environ.get("PYSPARK_PYTHON") or sys.executable)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"pyspark.daemon" not in cmd and b"pyspark.worker" not in cmd:
                continue
            if os.path.abspath(cmd.split(b"\0", 1)[0].decode()) != python:  # (venvs share one binary)
                continue
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            continue
    return peak / 1024


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--copies", type=int, default=11)
    parser.add_argument("--methods", default="cectd-ds")
    parser.add_argument("--writer", default="auto", choices=("auto", "arrow", "spark"))
    parser.add_argument("--hostile", action="store_true")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="rounds of loop, job and job reading files whole, back to back; the figures are their medians",
    )
    parser.add_argument(
        "--loop-language",
        action="store_true",
        help="also time the loop with the language id and hash the job adds to every ok row",
    )
    parser.add_argument(
        "--jvm-defaults",
        action="store_true",
        help="start the driver JVM with its default options, not conf/extract.toml's driver_java_options",
    )
    args = parser.parse_args()
    methods = tuple(args.methods.split(","))
    if not SCALE_FIXTURE.exists():
        sys.exit(f"missing {SCALE_FIXTURE}")
    procs = os.cpu_count() or 2
    with tempfile.TemporaryDirectory(prefix="contentx-bench-") as tmp:
        files = scale_copies(args.copies, Path(tmp) / "in")
        from contentx_udf.runtime.session import spark_session

        # the session as the job starts it: conf/extract.toml's driver JVM options, unless
        # --jvm-defaults (the JVM's own: C2 and G1)
        configured = JobConfig(
            [], f"{tmp}/out", writer=args.writer, driver_java_options=configured_java_options()
        )
        options = "" if args.jvm_defaults else driver_java_options(configured)
        print(f"driver JVM options: {options or '(the JVM defaults)'}")
        spark = spark_session("contentx-job-speed", options)
        spark.sparkContext.setLogLevel("ERROR")
        # warm-up: start the Python workers (one file per core: one task, so one worker, each)
        run(
            JobConfig(inputs=files[:procs], output=f"{tmp}/warm", methods=methods, writer=args.writer),
            spark=spark,
        )
        rounds: list[dict[str, float]] = []
        for k in range(args.rounds):
            # one round: the loop, then the job, then the job reading every file whole, back to back
            # (a shared machine's speed drifts by a few per cent over minutes: each round's ratios
            # compare runs made within a minute of each other; the figures are the rounds' medians)
            loop_records, loop_s = plain_loop(files, methods, procs)
            lid_rate = None
            if args.loop_language:
                lid_records, lid_s = plain_loop(files, methods, procs, language=True)
                lid_rate = lid_records / lid_s
            summary = run(
                JobConfig(inputs=files, output=f"{tmp}/out{k}", methods=methods, writer=args.writer),
                spark=spark,
            )
            # the same job with every file read whole by one task (min_piece_bytes 0)
            whole = run(
                JobConfig(
                    inputs=files,
                    output=f"{tmp}/whole{k}",
                    methods=methods,
                    writer=args.writer,
                    min_piece_bytes=0,
                ),
                spark=spark,
            )
            job_records = summary["content_records"]  # the loop counts content records too
            figures = {
                "loop_rps": loop_records / loop_s,
                "job_rps": job_records / summary["elapsed_seconds"],
                "whole_files_rps": whole["content_records"] / whole["elapsed_seconds"],
            }
            figures["ratio"] = figures["job_rps"] / figures["loop_rps"]
            figures["ratio_whole_files"] = figures["whole_files_rps"] / figures["loop_rps"]
            if lid_rate:
                figures["loop_language_rps"] = lid_rate
                figures["ratio_language"] = figures["job_rps"] / lid_rate
            rounds.append(figures)
            print(
                f"round {k + 1}: plain loop ({procs} processes) {figures['loop_rps']:.1f} records/s, "
                f"spark job (local[*], writer {args.writer}) {figures['job_rps']:.1f} "
                f"({job_records} records in {summary['elapsed_seconds']:.1f} s): "
                f"ratio {figures['ratio']:.2f}; "
                f"every file read whole (no pieces) {figures['whole_files_rps']:.1f}: "
                f"{figures['ratio_whole_files']:.2f}"
                + (
                    f"; loop + language id and hash {lid_rate:.1f}: {figures['ratio_language']:.2f}"
                    if lid_rate
                    else ""
                ),
                flush=True,
            )
        median = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
        loop_rate, job_rate, whole_rate = median["loop_rps"], median["job_rps"], median["whole_files_rps"]
        rss = python_workers_peak_rss_mb()
        print(f"spark / loop, median of {len(rounds)} rounds: {median['ratio']:.2f} (goal >= 0.9)")
        print(f"spark with every file read whole (no pieces) / loop: {median['ratio_whole_files']:.2f}")
        if args.loop_language:
            print(f"spark / (loop + language id and hash): {median['ratio_language']:.2f}")
        print(f"peak RSS of the Python workers: {rss:.0f} MB (goal <= 1024)")
        hostile_rss = None
        if args.hostile:
            run(
                JobConfig(
                    inputs=[str(FIXTURES / "hostile.warc.gz")],
                    output=f"{tmp}/hostile",
                    methods=methods,
                    writer=args.writer,
                ),
                spark=spark,
            )
            hostile_rss = python_workers_peak_rss_mb()
            print(f"peak RSS of the Python workers after the hostile fixture: {hostile_rss:.0f} MB")
        spark.stop()
    ratios = ",".join(f"{r['ratio']:.2f}" for r in rounds)
    print(
        f"RESULT loop_rps={loop_rate:.1f} job_rps={job_rate:.1f} ratio={median['ratio']:.2f} "
        f"worker_peak_rss_mb={rss:.0f} whole_files_rps={whole_rate:.1f} "
        f"ratio_whole_files={median['ratio_whole_files']:.2f} rounds={len(rounds)} "
        f"ratios={ratios}"
        + (f" hostile_peak_rss_mb={hostile_rss:.0f}" if hostile_rss else "")
        + (
            f" loop_language_rps={median['loop_language_rps']:.1f}"
            f" ratio_language={median['ratio_language']:.2f}"
            if args.loop_language
            else ""
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
