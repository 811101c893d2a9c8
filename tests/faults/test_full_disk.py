"""A full disk under the output: one line naming the full path, exit code 2, nothing that looks
finished; after space is freed, ``--resume`` (extraction) or ``--overwrite`` (corpus) gives the
output of an uninterrupted run.

The output sits on a tmpfs of a few hundred KB that a filler file has almost filled (mounting
needs root, as in CI; elsewhere the tests skip and say why).  In the last test Spark's local
directory (``SPARK_LOCAL_DIRS``) is on the small filesystem instead, in a job of its own process.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from contentx_udf import cli
from contentx_udf.errors import disk_full_line

from ..conftest import SESSION_SQL_SUBMIT_ARGS
from ..spark.cluster import CORPUS_JOB, REPO, loopback_env
from ..spark.test_job import SAMPLE, _comparable
from .inputs import corpus_docs, small_tmpfs

#: (``full_disk``: the suite's summary says so when these could not run here, tests/conftest.py)
pytestmark = [pytest.mark.spark, pytest.mark.full_disk]

#: Size of the small filesystem, and what the filler leaves free: enough for directories and
#: markers, too little for the Parquet files of the sample.
FS_KB = 512
FREE_KB = 12


@pytest.fixture()
def small_fs(tmp_path):
    """A tmpfs of :data:`FS_KB` KB mounted on ``tmp_path/small``, filled to :data:`FREE_KB` KB free;
    yields ``(mount point, filler file)``."""
    with small_tmpfs(tmp_path / "small", FS_KB) as mount:
        filler = mount / "filler"
        filler.write_bytes(b"\0" * ((FS_KB - FREE_KB) * 1024))
        yield mount, filler


def _one_error_line(capsys) -> str:
    err = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


def test_extraction_on_a_full_disk_is_one_line_and_resume_completes(spark, tmp_path, small_fs, capsys):
    mount, filler = small_fs
    out = mount / "out"
    argv = ["run", "--input", str(SAMPLE), "--output", str(out), "--methods", "cectd-ds"]
    assert cli.main(argv) == 2
    line = _one_error_line(capsys)
    assert "no space left on device writing " + str(out) in line, line
    assert line.endswith("rerun with --resume")
    assert not list((out / "_contentx" / "batches").glob("*.json")), "no batch may look finished"
    assert not list(out.glob("method=*/part-*")), "no part file may be in place"
    assert not list(out.rglob("*.tmp")), "the worker removes its partial file"

    filler.unlink()
    assert cli.main([*argv, "--resume"]) == 0
    reference = tmp_path / "reference"
    assert cli.main(["run", "--input", str(SAMPLE), "--output", str(reference), "--methods", "cectd-ds"]) == 0
    assert _comparable(spark, out) == _comparable(spark, reference)


def test_corpus_on_a_full_disk_is_one_line_and_overwrite_completes(
    spark, small_fs, month_tables, month1_corpus, capsys
):
    """(the uninterrupted build compared with is the session's month 1 corpus, tests/conftest.py)"""
    mount, filler = small_fs
    month1, _month2 = month_tables
    out = mount / "corpus"
    argv = ["corpus", "--input", str(month1), "--output", str(out), "--dedup", "near"]
    assert cli.main(argv) == 2
    line = _one_error_line(capsys)
    assert "no space left on device writing " in line and str(mount) in line, line
    assert line.endswith("rerun with --overwrite")
    assert not (out / "_SUCCESS").exists()

    filler.unlink()
    assert cli.main([*argv, "--overwrite"]) == 0
    reference, _report = month1_corpus
    assert (out / "_SUCCESS").exists()

    assert corpus_docs(out) == corpus_docs(reference)


def test_corpus_with_a_full_spark_local_dir_is_one_line_and_overwrite_completes(
    spark, tmp_path, small_fs, months_corpus
):
    """Spark's local directory (``SPARK_LOCAL_DIRS``: shuffle and spill files) on the nearly full
    filesystem, the output elsewhere; the job runs in its own process, as its Spark is new."""
    mount, filler = small_fs
    month1, month2, reference, _report = months_corpus
    out = tmp_path / "corpus"
    cmd = [
        sys.executable,
        str(CORPUS_JOB),
        "--input",
        str(month1),
        str(month2),
        "--output",
        str(out),
        "--dedup",
        "near",
    ]
    # (the session's quick JIT tier and SQL engine without generated code: what is tested is where
    # the disk fills and what the rerun writes, and each cold job compiled its queries)
    env = loopback_env(SPARK_LOCAL_DIRS=str(mount / "local"), PYSPARK_SUBMIT_ARGS=SESSION_SQL_SUBMIT_ARGS)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 2, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("contentx corpus: error:")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "no space left on device writing Spark's local directory " + str(mount / "local") in lines[0], (
        lines[0]
    )
    assert lines[0].endswith("rerun with --overwrite")
    assert not (out / "_SUCCESS").exists() and not (out / "documents").exists()

    filler.unlink()
    done = subprocess.run(
        [*cmd, "--overwrite"], env=env, capture_output=True, text=True, timeout=300, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-3000:]

    assert corpus_docs(out) == corpus_docs(reference)


def test_a_full_local_dir_names_it_not_the_output(monkeypatch):
    """The JVM's shuffle writer names no file (``java.io.IOException: No space left on device``
    in ``DiskBlockObjectWriter``): the line names Spark's local directory, not the output."""
    monkeypatch.setenv("SPARK_LOCAL_DIRS", "/scratch/spark")
    shuffle = RuntimeError(
        "java.io.IOException: No space left on device\n"
        "\tat org.apache.spark.storage.DiskBlockObjectWriter.commitAndGet(DiskBlockObjectWriter.scala:241)"
    )
    line = disk_full_line(shuffle, "/data/out")
    assert line.startswith("no space left on device writing Spark's local directory /scratch/spark:"), line
    output = RuntimeError("java.io.IOException: No space left on device\n\tat org.apache.parquet.hadoop.X")
    assert disk_full_line(output, "/data/out").startswith("no space left on device writing /data/out:")
