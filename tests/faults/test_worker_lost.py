"""An executor lost mid-run on a standalone cluster (one master, two one-core workers on
127.0.0.1): its JVM is killed by process id once tasks run; Spark runs its tasks again on what is
left, and the table equals an uninterrupted local run's -- no row lost, none doubled (a retried
file's parts replace the lost attempt's)."""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import time

import pytest

from contentx_udf.spark import job
from contentx_udf.spark.config import JobConfig

from ..spark.cluster import StandaloneCluster
from ..spark.test_cluster import check_run, table_rows
from .inputs import sample_copies

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


def executor_pids(cluster: StandaloneCluster) -> list[int]:
    """Process ids of the executor JVMs the cluster's workers launched."""
    found = subprocess.run(["pgrep", "-f", "CoarseGrainedExecutorBackend"], capture_output=True, text=True)
    pids = [int(p) for p in found.stdout.split()]
    mine = []
    for pid in pids:
        try:
            command = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
        except OSError:
            continue
        if str(cluster.workdir) in command or f":{cluster.port}" in command or "spark://" in command:
            mine.append(pid)
    return mine or pids


@pytest.fixture()
def inputs(tmp_path):
    return sample_copies(tmp_path, 8)


@pytest.mark.parametrize("victim", ["executor", "worker"])
def test_an_executor_or_worker_lost_mid_run_loses_nothing(spark, tmp_path, inputs, victim):
    """``executor``: one executor JVM killed; ``worker``: a whole worker (its daemon and its
    executor) killed, and a new worker started a little later."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed")
    reference = tmp_path / "reference"
    config = JobConfig(inputs=[str(p) for p in inputs], output=str(reference), methods=("combined",))
    job.run(config, spark=spark)

    cluster = StandaloneCluster(tmp_path / "cluster", workers=2, cores=1, memory="1g").start()
    try:
        out = tmp_path / "out"
        args = ["--input", *map(str, inputs), "--output", str(out), "--methods", "combined",
                "--num-partitions", str(len(inputs))]  # fmt: skip
        with cluster.submit_async(args) as proc:
            deadline = time.monotonic() + 180
            while not (out / "_contentx" / "staging").exists() or len(executor_pids(cluster)) < 2:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no task started"
                time.sleep(0.2)
            time.sleep(random.Random().uniform(0.0, 1.5))  # a random point after tasks start
            assert proc.poll() is None, "the job ended before the kill"
            if victim == "executor":
                os.kill(executor_pids(cluster)[0], signal.SIGKILL)
            else:
                os.killpg(cluster.procs[1].pid, signal.SIGKILL)  # procs: master, worker0, worker1
                time.sleep(2)
                cluster.add_worker("worker-late")
            stdout, stderr = proc.communicate(timeout=300)
        check_run(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
        lost = re.search(r"Lost executor|ExecutorLostFailure", stderr)
        assert lost, f"the kill did not cost the job an executor: {stderr[-3000:]}"
        assert table_rows(out) == table_rows(reference)
    finally:
        cluster.stop()
