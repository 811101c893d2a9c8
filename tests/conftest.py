"""Shared fixtures: paths to the shared data and one SparkSession for the whole suite."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
SHARED_WARC = SHARED / "warc"
DEVSET = SHARED / "data" / "scrapinghub"
TEST_DATA = REPO / "tests" / "data"


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession shared by every Spark test (started on first use)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed")
    from contentx_udf.worker_env import prepare_driver

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
