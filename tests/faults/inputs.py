"""Input files for the fault tests: copies of the bundled sample WARC, a two-part extraction
table and the part's rewrite, and what a corpus holds."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ..corpus.tables import table_row, texts_of, write_table
from ..spark.test_job import SAMPLE


def sample_copies(tmp_path: Path, n: int) -> list[Path]:
    """``n`` copies of the sample WARC under ``tmp_path/in`` (``part-<i>.warc.gz``)."""
    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    paths = [folder / f"part-{i}.warc.gz" for i in range(n)]
    for path in paths:
        shutil.copy(SAMPLE, path)
    return paths


def two_part_table(root: Path) -> tuple[Path, Path]:
    """An extraction table of two batches (a part file each), 12 articles in all; returns the
    table and its second part."""
    texts = texts_of("one", range(12))
    rows = [table_row(url, text, offset=i) for i, (url, text) in enumerate(texts)]
    write_table(root, "combined", rows[:6], batch="20240501T000000-0000aaaa")
    write_table(root, "combined", rows[6:], batch="20240502T000000-0000bbbb")
    [second] = (root / "method=combined").glob("b20240502*.parquet")
    return root, second


def replace_part(part: Path) -> None:
    """The part rewritten by another writer: other documents (9, 6 of them copies of the first
    part's), moved over the old file at once."""
    rows = [table_row(url, text, offset=i) for i, (url, text) in enumerate(texts_of("new", range(9)))]
    fresh = part.parent / "fresh"
    write_table(fresh, "combined", rows, batch="20240502T000000-0000bbbb")
    os.replace(next((fresh / "method=combined").glob("*.parquet")), part)
    shutil.rmtree(fresh)


def corpus_docs(out: Path) -> list[tuple]:
    """(url, text hash, cluster size) of a local corpus's documents, sorted (read with pyarrow: no
    Spark job for a check)."""
    columns = ["url", "text_hash", "duplicate_count"]
    rows = pq.read_table(out / "documents", columns=columns).to_pylist()
    return sorted(tuple(row[c] for c in columns) for row in rows)


@contextmanager
def small_tmpfs(mount: Path, kb: int) -> Iterator[Path]:
    """A tmpfs of ``kb`` KB mounted on ``mount`` (created), unmounted afterwards; the test skips
    with the reason where mounting is not allowed (not root)."""
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={kb}k", f"contentx-{uuid.uuid4().hex[:6]}", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.strip()[:120]}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
