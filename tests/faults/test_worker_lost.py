"""An executor lost mid-run on a standalone cluster (one master, two one-core workers on
127.0.0.1), during the extraction job and during the corpus job: its JVM is killed by process id
once tasks run, or its whole worker is killed and a new worker started a little later.  Spark runs
the lost tasks (and lost shuffle output) again on what is left, and the output equals an
uninterrupted local run's -- the extraction table's rows (none lost, none doubled: a retried
file's parts replace the lost attempt's), the corpus's documents and report counts."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from contentx_udf.spark import job
from contentx_udf.spark.config import JobConfig

from ..spark.cluster import CORPUS_JOB, JOB, StandaloneCluster, executor_pids, settled
from ..spark.test_cluster import check_run, table_rows
from .inputs import sample_copies

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

#: What the report of a corpus must repeat exactly after a loss.
REPORT_COUNTS = ("input_rows", "kept", "dropped", "cluster_sizes", "languages")


def registered_executor_pids(cluster: StandaloneCluster) -> list[int]:
    """The executors of :func:`executor_pids` that registered with the driver (their log in their
    work directory says so).  Killing one before that costs the job nothing the driver sees: the
    master just launches another, and the test would prove nothing."""
    registered = []
    for pid in executor_pids(cluster):
        try:
            log = Path(os.readlink(f"/proc/{pid}/cwd")) / "stderr"
            if "Successfully registered with driver" in log.read_text(errors="replace"):
                registered.append(pid)
        except OSError:
            continue
    return registered


def alive_workers(cluster: StandaloneCluster) -> int:
    """How many workers the master's status lists as alive."""
    return sum(w.get("state") == "ALIVE" for w in cluster.state().get("workers", []))


def kill_mid_run(
    cluster: StandaloneCluster, proc: subprocess.Popen, out: Path, victim: str, delay: float
) -> bool:
    """Once the job staged its first output and both executors registered with the driver, wait
    ``delay`` s and kill one executor JVM (``executor``) or a live worker with its executor
    (``worker``; then a new worker joins, once the master has seen the killed one go: one worker
    fewer alive in its status).  False when the job ended before the kill.

    The corpus job stages its output before its executors have started on a slow machine, so
    the wait is for their registration, not only for their processes."""
    deadline = time.monotonic() + 180
    while (
        not (out / "_contentx" / "staging").exists()
        and not (out / "_staging").exists()
        or (len(registered_executor_pids(cluster)) < 2)
    ):
        if proc.poll() is not None:
            return False
        assert time.monotonic() < deadline, "no task started"
        time.sleep(0.1)
    time.sleep(delay)
    if proc.poll() is not None:
        return False
    if victim == "executor":
        os.kill(registered_executor_pids(cluster)[0], signal.SIGKILL)
    else:
        live = [p for p in cluster.procs[1:] if p.poll() is None]  # procs: master, workers ...
        alive = alive_workers(cluster)
        os.killpg(live[0].pid, signal.SIGKILL)
        deadline = time.monotonic() + 120
        while alive_workers(cluster) >= alive:  # (the master hears of it when the connection drops)
            assert time.monotonic() < deadline, "the master did not see the killed worker go"
            time.sleep(0.05)
        cluster.add_worker(f"worker-late-{len(cluster.procs)}")
    return True


def corpus_documents(out: Path) -> list[tuple]:
    import pyarrow.dataset as ds

    table = ds.dataset(str(out / "documents"), format="parquet").to_table(
        columns=["url", "text_hash", "duplicate_count"]
    )
    return sorted(tuple(r.values()) for r in table.to_pylist())


def report_counts(out: Path) -> dict:
    report = json.loads((out / "_report.json").read_text())
    return {key: report[key] for key in REPORT_COUNTS}


@pytest.fixture()
def cluster(standalone_cluster):
    """The session's cluster (tests/conftest.py) once two workers are alive and the last test's
    executors are gone (a killed worker is replaced by the test)."""
    return settled(standalone_cluster)


#: What the driver logs when it learns an executor is gone: the task scheduler's "Lost
#: executor" (tasks were running on it) or "Lost an executor" (none were), the DAG scheduler's
#: "Executor lost:", or a task's ExecutorLostFailure.  Which one depends on when the kill lands.
EXECUTOR_LOST = re.compile(r"Lost (an )?executor|Executor lost:|ExecutorLostFailure")


def _lost(stderr: str) -> None:
    assert EXECUTOR_LOST.search(stderr), f"the kill did not cost the job an executor: {stderr[-3000:]}"


@pytest.fixture(scope="module")
def extraction_reference(spark, tmp_path_factory) -> tuple[list[Path], list[tuple]]:
    """Eight copies of the sample WARC (read only) and the rows of their uninterrupted local run,
    the reference of both victims."""
    root = tmp_path_factory.mktemp("worker-lost")
    inputs = sample_copies(root, 8)
    reference = root / "reference"
    job.run(
        JobConfig(inputs=[str(p) for p in inputs], output=str(reference), methods=("combined",)), spark=spark
    )
    return inputs, table_rows(reference)


@pytest.mark.parametrize("victim", ["executor", "worker"])
def test_extraction_loses_nothing_when_an_executor_or_worker_is_lost(
    extraction_reference, tmp_path, cluster, victim
):
    """``executor``: one executor JVM killed; ``worker``: a whole worker (its daemon and its
    executor) killed, and a new worker started a little later."""
    inputs, reference_rows = extraction_reference
    out = tmp_path / "out"
    args = ["--input", *map(str, inputs), "--output", str(out), "--methods", "combined",
            "--num-partitions", str(len(inputs))]  # fmt: skip
    with cluster.submit_async(args, job=JOB) as proc:
        # (at most 0.5 s after the first task's output: on a quiet machine the other 7 tasks took
        # 1-2 s, and a kill up to 1.5 s later came after the last, 3 runs in 12)
        assert kill_mid_run(cluster, proc, out, victim, random.Random().uniform(0.0, 0.5)), "ended first"
        stdout, stderr = proc.communicate(timeout=300)
    check_run(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
    _lost(stderr)
    assert table_rows(out) == reference_rows


@pytest.mark.parametrize("victim", ["executor", "worker"])
def test_corpus_loses_nothing_when_an_executor_or_worker_is_lost(
    spark, tmp_path, cluster, months_corpus, victim
):
    month1, month2, reference, _report = months_corpus
    out = tmp_path / "out"
    args = ["--input", str(month1), str(month2), "--output", str(out)]
    with cluster.submit_async(args, job=CORPUS_JOB) as proc:
        assert kill_mid_run(cluster, proc, out, victim, random.Random().uniform(0.0, 1.5)), "ended first"
        stdout, stderr = proc.communicate(timeout=300)
    check_run(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
    _lost(stderr)
    assert corpus_documents(out) == corpus_documents(reference)
    assert report_counts(out) == report_counts(reference)
