"""The extraction job's driver killed (SIGKILL to its whole process group: driver, JVM and Python
workers) during its second batch, at a random point: nothing of the unfinished batch looks done,
and ``--resume`` gives the table of an uninterrupted run.  (The corpus job killed during its
duplicate graph: tests/corpus/test_corpus_io.py's killed-run test.)"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from contentx_udf import cli
from contentx_udf.spark import job

from ..spark.cluster import JOB, REPO, loopback_env
from ..spark.test_job import _comparable, config
from .inputs import sample_copies

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

    assert cli.main(["run", *args, "--resume"]) == 0
    assert _comparable(spark, out) == _comparable(spark, reference)
