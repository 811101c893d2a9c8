"""Input files for the fault tests: copies of the bundled sample WARC."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..spark.test_job import SAMPLE


def sample_copies(tmp_path: Path, n: int) -> list[Path]:
    """``n`` copies of the sample WARC under ``tmp_path/in`` (``part-<i>.warc.gz``)."""
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    paths = [folder / f"part-{i}.warc.gz" for i in range(n)]
    for path in paths:
        shutil.copy(SAMPLE, path)
    return paths
