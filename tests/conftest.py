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
        # (one such session per pytest-xdist worker: each JVM's heap bounded, half the jobs' 2g)
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def standalone_cluster(tmp_path_factory):
    """One Spark standalone cluster (a master, two one-core workers on 127.0.0.1) for every
    cluster test of the session (tests/spark/test_cluster.py, tests/faults/test_worker_lost.py):
    three JVMs started once.  Tests take it through :func:`.spark.cluster.settled`."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed")
    from .spark.cluster import StandaloneCluster

    cluster = StandaloneCluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1, memory="1g")
    try:
        yield cluster.start()
    finally:
        cluster.stop()


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


def pytest_terminal_summary(terminalreporter) -> None:
    """A section of its own for the full-disk fault tests when they could not run here (mounting
    their small tmpfs needs root, as in CI): a skip among a thousand passes goes unnoticed."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if "full_disk" in getattr(report, "keywords", {})
    ]
    if not skipped:
        return
    reasons = sorted(
        {str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else "" for report in skipped}
    )
    terminalreporter.section("full-disk tests not run on this machine", sep="=", yellow=True, bold=True)
    terminalreporter.line(
        f"{len(skipped)} tests of tests/faults (test_full_disk.py, test_disk_fills.py) skipped: "
        + "; ".join(reasons)
    )
    terminalreporter.line("run the suite as root (as CI does) for the job's full-disk path to be tested")


#: Rough relative cost of a test by what it starts, for the order in which pytest-xdist hands out
#: the test files (``./dev.sh test`` runs ``--dist loadfile --no-loadscope-reorder``): jobs on the
#: standalone cluster (``cluster`` marker), Spark jobs in a file that starts processes of its own
#: (a JVM each), Spark jobs in the shared session, a plain function.
_COST = {"cluster": 1000, "spark_processes": 300, "spark": 30, "plain": 1}


def _cost(item: pytest.Item) -> int:
    if item.get_closest_marker("cluster"):
        return _COST["cluster"]
    if item.get_closest_marker("spark") or "spark" in getattr(item, "fixturenames", ()):
        starts_processes = hasattr(getattr(item, "module", None), "subprocess")
        return _COST["spark_processes" if starts_processes else "spark"]
    return _COST["plain"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the files whose tests start clusters and Spark jobs first and the quick
    ones last, so that no worker is left with a slow file while the others have finished (files
    stay whole: their module fixtures are built once).  A plain run keeps the files' order."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    weight: dict[str, int] = {}
    for item in items:
        weight[item.nodeid.split("::", 1)[0]] = weight.get(item.nodeid.split("::", 1)[0], 0) + _cost(item)
    order = {path: rank for rank, path in enumerate(sorted(weight, key=lambda p: -weight[p]))}
    items.sort(key=lambda item: order[item.nodeid.split("::", 1)[0]])  # (stable: a file's own order kept)


#: Test files that share the session's standalone cluster: pytest-xdist runs them on one worker,
#: one after the other, so the cluster starts once (pytest_xdist_make_scheduler).
CLUSTER_FILES = ("tests/spark/test_cluster.py", "tests/faults/test_worker_lost.py")


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile`` with :data:`CLUSTER_FILES` as one unit of work (else pytest-xdist's own)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class ClusterFilesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return CLUSTER_FILES[0] if path in CLUSTER_FILES else super()._split_scope(nodeid)

    return ClusterFilesTogether(config, log)
