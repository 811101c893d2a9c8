"""A full disk under the output: one line naming the full path, exit code 2, nothing that looks
finished; after space is freed, ``--resume`` (extraction) or ``--overwrite`` (corpus) gives the
output of an uninterrupted run.

The output sits on a tmpfs of a few hundred KB that a filler file has almost filled (mounting
needs root, as in CI; elsewhere the tests skip and say why).  Spark's own local directory is the
shared session's and is not on the small filesystem here.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from contentx_udf import cli

from ..corpus.tables import two_months
from ..spark.test_job import SAMPLE, _comparable

pytestmark = pytest.mark.spark

#: Size of the small filesystem, and what the filler leaves free: enough for directories and
#: markers, too little for the Parquet files of the sample.
FS_KB = 512
FREE_KB = 12


@pytest.fixture()
def small_fs(tmp_path):
    """A tmpfs of :data:`FS_KB` KB mounted on ``tmp_path/small``, filled to :data:`FREE_KB` KB free;
    yields ``(mount point, filler file)``."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={FS_KB}k", f"contentx-{uuid.uuid4().hex[:6]}", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.strip()[:120]}")
    try:
        filler = mount / "filler"
        filler.write_bytes(b"\0" * ((FS_KB - FREE_KB) * 1024))
        yield mount, filler
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


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


def test_corpus_on_a_full_disk_is_one_line_and_overwrite_completes(spark, tmp_path, small_fs, capsys):
    mount, filler = small_fs
    month1, _month2 = two_months(tmp_path / "months")
    out = mount / "corpus"
    argv = ["corpus", "--input", str(month1), "--output", str(out), "--dedup", "near"]
    assert cli.main(argv) == 2
    line = _one_error_line(capsys)
    assert "no space left on device writing " in line and str(mount) in line, line
    assert line.endswith("rerun with --overwrite")
    assert not (out / "_SUCCESS").exists()

    filler.unlink()
    assert cli.main([*argv, "--overwrite"]) == 0
    reference = tmp_path / "reference"
    assert cli.main(["corpus", "--input", str(month1), "--output", str(reference), "--dedup", "near"]) == 0
    assert (out / "_SUCCESS").exists()

    def docs(path: Path) -> list[tuple]:
        rows = spark.read.parquet(str(path / "documents")).select("url", "text_hash", "duplicate_count")
        return sorted(tuple(r) for r in rows.collect())

    assert docs(out) == docs(reference)
