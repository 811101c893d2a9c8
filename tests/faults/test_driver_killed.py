"""The extraction job's driver killed (SIGKILL to its whole process group: driver, JVM and Python
workers) during its second batch, at a random point: nothing of the unfinished batch looks done
(no plain ``**/*.parquet`` glob reads it), and ``--resume`` gives the table of an uninterrupted
run.  The corpus job's driver killed at a random point of its duplicate graph: no ``_SUCCESS``,
and ``--overwrite`` gives the documents and report counts of an uninterrupted run."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

from contentx_udf import cli
from contentx_udf.spark import job

from ..spark.cluster import CORPUS_JOB, JOB, REPO, loopback_env, quick_jit_env
from ..spark.test_job import _comparable, config
from .inputs import corpus_docs, sample_copies

pytestmark = pytest.mark.spark


def test_driver_killed_in_the_second_batch_then_resume_equals_a_full_run(spark, tmp_path):
    inputs = sample_copies(tmp_path, 6)
    reference = tmp_path / "reference"
    job.run(config(inputs, reference, methods=("cectd-ds",)), spark=spark)

    out = tmp_path / "out"
    args = [
        "--input",
        *map(str, inputs),
        "--output",
        str(out),
        "--methods",
        "cectd-ds",
        "--files-per-batch",
        "1",
    ]
    proc = subprocess.Popen(
        [sys.executable, str(JOB), *args],
        env=loopback_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=REPO,
    )
    markers = out / "_contentx" / "batches"
    try:
        deadline = time.monotonic() + 240
        while len(list(markers.glob("*.json"))) < 1:  # the first batch is committed
            assert proc.poll() is None and time.monotonic() < deadline, "the job ended before the kill"
            time.sleep(0.05)
        time.sleep(random.Random().uniform(0.0, 0.5))  # a random point in the next batch
        killed_at = len(list(markers.glob("*.json")))
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert killed_at < len(inputs), "every batch was committed before the kill"
    assert not (out / "_summary.json").exists()
    # a plain glob (docs/schemas.md) reads the table's files, none of the unfinished batch's
    # staging (its files are not named *.parquet; DuckDB's ** descends into _contentx/)
    import duckdb

    glob = f"read_parquet('{out}/**/*.parquet', hive_partitioning=true, filename=true)"
    read = [name for (name,) in duckdb.sql(f"select distinct filename from {glob}").fetchall()]
    assert read and not [name for name in read if "/_contentx/" in name], read

    assert cli.main(["run", *args, "--resume"]) == 0
    assert _comparable(spark, out) == _comparable(spark, reference)


def kill_in_the_duplicate_graph(
    cmd: list[str], rng: random.Random, within: float = 0.5, env: dict[str, str] | None = None
) -> list[str]:
    """Run the corpus job ``cmd`` (progress on stderr; ``env``, by default :func:`loopback_env`),
    SIGKILL its process group a random time (up to ``within`` s) after its first pass was written,
    while the duplicate graph runs; returns the stages it printed.  AssertionError when the graph
    ended before the kill."""
    proc = subprocess.Popen(
        cmd, env=env or loopback_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True, cwd=REPO,
    )  # fmt: skip
    stages: list[str] = []
    try:
        for line in proc.stderr:
            stages.append(line.strip())
            if "first pass written" in line:
                break
        else:
            raise AssertionError(f"the job ended before its duplicate graph: {stages[-5:]}")
        reader = threading.Thread(target=lambda: stages.extend(s.strip() for s in proc.stderr), daemon=True)
        reader.start()
        time.sleep(rng.uniform(0.0, within))
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    reader.join(timeout=5)
    assert not any("duplicates found" in s for s in stages), "the graph ended before the kill"
    return stages


def test_corpus_driver_killed_in_the_duplicate_graph_then_overwrite_equals_a_full_run(
    spark, tmp_path, months_corpus
):
    month1, month2, reference_dir, reference = months_corpus
    args = ["--input", str(month1), str(month2), "--dedup", "near"]
    out = tmp_path / "out"
    # (its driver JVM on the suite's quick JIT tier and serial collector, quick_jit_env: the job up
    # to the kill costs about half the CPU; its duplicate graph still takes seconds, not 0.3 s, and
    # the test fails if the graph ended before the kill)
    stages = kill_in_the_duplicate_graph(
        [sys.executable, str(CORPUS_JOB), *args, "--output", str(out)], random.Random(), 0.3, quick_jit_env()
    )
    # its console up to the kill (the JVM's start, Spark's first stages), at the default log level:
    # no JVM or Spark warning, no stage bar, only the job's own stage lines
    for noise in ("WARN", "Using incubator modules", "[Stage", "Setting default log level"):
        assert not any(noise in line for line in stages), stages
    assert all(line.startswith("contentx corpus: ") for line in stages if line), stages
    assert not (out / "_SUCCESS").exists() and not (out / "documents").exists()
    assert list(out.glob("_staging/*/pass/_SUCCESS")), "the kill came before the first pass was staged"

    assert cli.main(["corpus", *args, "--output", str(out), "--overwrite"]) == 0
    assert corpus_docs(out) == corpus_docs(reference_dir)
    report = json.loads((out / "_report.json").read_text())
    for key in ("input_rows", "kept", "dropped"):
        assert report[key] == reference[key], key
    assert not (out / "_staging").exists()
