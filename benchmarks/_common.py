"""Shared by the Spark benchmarks: the scale fixture and its copies."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / "shared" / "warc" / "fixtures"
SCALE_FIXTURE = FIXTURES / "scrapinghub-scale.warc.gz"


def scale_copies(copies: int, directory: Path) -> list[str]:
    """``copies`` copies of the scale fixture (181 HTML pages each) in ``directory``; their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(copies):
        dst = directory / f"copy-{i:03d}.warc.gz"
        shutil.copy(SCALE_FIXTURE, dst)
        files.append(str(dst))
    return files
