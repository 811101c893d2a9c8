"""The disk under the extraction job's output and Spark's local directory fills up WHILE the job
runs (another writer takes the last bytes after the first batch was committed): one line naming
the full path, exit code 2, no ``_summary.json``, no marker of the unfinished batch (readers refuse
its parts) and no half-written file; after space is freed, ``--resume`` gives the table of an
uninterrupted run.

Both the output and ``SPARK_LOCAL_DIRS`` sit on one tmpfs of 2 MB (mounting needs root, as in CI;
elsewhere the test skips and says why); the job runs in its own process, as its Spark is new.
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contentx_udf import cli
from contentx_udf.errors import disk_full_line
from contentx_udf.runtime.store import LocalOutputStore
from contentx_udf.spark import job

from ..spark.cluster import JOB, REPO, loopback_env
from ..spark.test_job import _comparable, config
from .inputs import sample_copies, small_tmpfs

#: (``full_disk``: the suite's summary says so when these could not run here, tests/conftest.py)
pytestmark = [pytest.mark.spark, pytest.mark.full_disk]

FS_KB = 2048


def fill_up(mount: Path) -> Path:
    """Write ``mount/filler`` until the filesystem has no byte left; returns the filler."""
    filler = mount / "filler"
    chunk = b"\0" * 65536
    with open(filler, "ab", buffering=0) as fh:
        for size in (65536, 4096, 512, 1):
            try:
                while True:
                    fh.write(chunk[:size])
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
    return filler


@pytest.fixture()
def small_fs(tmp_path):
    with small_tmpfs(tmp_path / "small", FS_KB) as mount:
        yield mount


def test_disk_filling_up_during_the_extraction_is_one_line_and_resume_completes(spark, tmp_path, small_fs):
    inputs = sample_copies(tmp_path, 3)
    reference = tmp_path / "reference"
    job.run(config(inputs, reference, methods=("cectd-ds",)), spark=spark)

    out = small_fs / "out"
    args = ["--input", *map(str, inputs), "--output", str(out), "--methods", "cectd-ds"]
    args += ["--files-per-batch", "1"]
    proc = subprocess.Popen(
        [sys.executable, str(JOB), *args],
        env=loopback_env(SPARK_LOCAL_DIRS=str(small_fs / "local")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    markers = out / "_contentx" / "batches"
    deadline = time.monotonic() + 240
    while not list(markers.glob("*.json")):  # the first batch is committed: the disk fills now
        assert proc.poll() is None and time.monotonic() < deadline, "the job ended before the disk filled"
        time.sleep(0.02)
    filler = fill_up(small_fs)
    _stdout, stderr = proc.communicate(timeout=300)

    assert proc.returncode == 2, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.startswith("contentx run: error:")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[-3000:]
    assert "no space left on device writing " + str(out) in lines[0], lines[0]
    assert lines[0].endswith("rerun with --resume"), lines[0]
    assert not (out / "_summary.json").exists()
    committed = [json.loads(p.read_text())["files"] for p in markers.glob("*.json")]
    assert 1 <= len(committed) < len(inputs), "the unfinished batch has no marker"
    assert not list(out.rglob("*.tmp")), "no half-written file is left"

    filler.unlink()
    assert cli.main(["run", *args, "--resume"]) == 0
    assert _comparable(spark, out) == _comparable(spark, reference)


def test_a_marker_that_cannot_be_written_is_named_and_leaves_no_tmp(small_fs):
    """The disk fills while a batch marker (or ``_summary.json``) is written: the error names
    that file and no half-written ``.tmp`` is left beside it."""
    fill_up(small_fs)
    store = LocalOutputStore(str(small_fs / "out"))
    with pytest.raises(OSError) as caught:
        store.write_text(json.dumps({"files": ["x" * 100_000]}), "_contentx", "batches", "b.json")
    line = disk_full_line(caught.value, "/elsewhere")
    assert line.startswith(f"no space left on device writing {small_fs}/out/_contentx/batches/b.json:"), line
    assert list((small_fs / "out" / "_contentx" / "batches").iterdir()) == []
