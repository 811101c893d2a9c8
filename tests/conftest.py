"""Shared fixtures: paths to the shared data, one SparkSession for the whole suite, warcio ground truth."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

REPO = Path(__file__).resolve().parent.parent
#: The shared data (../shared beside the checkout; CONTENTX_SHARED names another place, e.g. from
#: a git worktree elsewhere)
SHARED = Path(os.environ.get("CONTENTX_SHARED") or REPO.parent / "shared")
SHARED_WARC = SHARED / "warc"
DEVSET = SHARED / "data" / "scrapinghub"
TEST_DATA = REPO / "tests" / "data"


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession shared by every Spark test (started on first use)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed")
    from contentx_udf.runtime.session import prepare_driver

    prepare_driver()
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("contentx-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    yield session
    session.stop()


def shared_or_skip(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data not present: {path}")
    return path


def warcio_records(path: Path) -> list[dict]:
    """Ground truth from warcio alone: type, id, URI, offset, length and HTML-ness of every record."""
    out = []
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        for rec in it:
            ctype = rec.http_headers.get_header("Content-Type") if rec.http_headers else None
            out.append(
                {
                    "type": rec.rec_type,
                    "id": rec.rec_headers.get_header("WARC-Record-ID"),
                    "uri": rec.rec_headers.get_header("WARC-Target-URI"),
                    "offset": it.get_record_offset(),
                    "length": it.get_record_length(),
                    "html": bool(ctype and "html" in ctype.lower()),
                }
            )
    return out
