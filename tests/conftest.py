"""Shared fixtures: paths to the shared data, one SparkSession for the whole suite, warcio ground truth."""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

REPO = Path(__file__).resolve().parent.parent
#: The shared data (../shared beside the checkout; CONTENTX_SHARED names another place, e.g. from
#: a git worktree elsewhere)
SHARED = Path(os.environ.get("CONTENTX_SHARED") or REPO.parent / "shared")
SHARED_WARC = SHARED / "warc"
DEVSET = SHARED / "data" / "scrapinghub"
TEST_DATA = REPO / "tests" / "data"


#: The JVM options of the suite's Spark session: its JIT at the quick tier only (C1, no C2), as
#: the extraction job's driver (``spark.config.DEFAULT_DRIVER_JAVA_OPTIONS``) and ``select``'s
#: short runs have it.  The suite's jobs are small: C2's compiles of Spark's classes and of the
#: code Spark generates for each query cost more than they save.  Measured on the 2-core machine
#: (a session building the 30-document month-1 corpus 4 times, JVM and Python workers' CPU): 37.0
#: -> 19.8 s to the end of the first build, then 8.5-10.5 -> 3.4-4.4 s a build.
#: The serial collector as well: a young-generation pause of a small heap costs less CPU than G1's
#: concurrent threads and barriers (a build in a warm session: -10 % CPU).
SESSION_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

#: :data:`SESSION_JAVA_OPTIONS` for a job the suite starts as a process, given as a user gives JVM
#: options: ``spark.driver.extraJavaOptions`` in ``PYSPARK_SUBMIT_ARGS`` (split as a shell would)
_SESSION_DRIVER_OPTIONS = shlex.quote(f"spark.driver.extraJavaOptions={SESSION_JAVA_OPTIONS}")
SESSION_SUBMIT_ARGS = f"--conf {_SESSION_DRIVER_OPTIONS} pyspark-shell"

#: The SQL engine of the suite's session evaluates expressions interpreted, without generating and
#: compiling Java code (Janino) per query: Spark's own test modes (``factoryMode``), the results
#: the same.  Each of the suite's hundreds of small queries paid a compile it never earned back:
#: a corpus build of 190 documents in a warm session, 5.5 -> 3.8 CPU s (with the serial
#: collector).  The cluster's jobs (tests/spark/cluster.py) and those of :data:`SESSION_SQL_SUBMIT_ARGS`
#: take it too; the other jobs the suite starts as processes keep the product's code generation.
SESSION_SQL_CONF = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}

#: :data:`SESSION_SUBMIT_ARGS` with :data:`SESSION_SQL_CONF`: a job process run as the session runs
SESSION_SQL_SUBMIT_ARGS = (
    " ".join(f"--conf {key}={value}" for key, value in SESSION_SQL_CONF.items()) + f" {SESSION_SUBMIT_ARGS}"
)


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
        .config("spark.driver.extraJavaOptions", SESSION_JAVA_OPTIONS)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config(map=SESSION_SQL_CONF)
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


def _build_corpus(spark, inputs: list[Path], output: Path, **kw) -> dict:
    from contentx_udf.corpus import job as corpus_job
    from contentx_udf.corpus.config import CorpusConfig

    return corpus_job.run(CorpusConfig(inputs=[str(p) for p in inputs], output=str(output), **kw), spark)


def built_once(tmp_path_factory, name: str, build: Callable[[Path], Any]) -> tuple[Path, Any]:
    """``(directory, result)`` of ``build(directory)``, run once for the whole run: under
    pytest-xdist the workers share the run's temporary directory (each worker's is a folder of
    it), and the first worker to ask builds while the others wait for it under a file lock and
    then read what it wrote.  ``result`` goes through JSON, so every worker sees the same value.
    Read only: a test that changes it copies it first."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / f"built-once-{name}"
    root.mkdir(exist_ok=True)
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # (released when the file closes)
        done = root / "result.json"
        if not done.exists():
            result = build(root / name)
            done.write_text(json.dumps(result))
        return root / name, json.loads(done.read_text())


# --- corpora built once per run and read by several test files (tests/corpus/test_corpus_io.py,
# tests/faults, tests/spark/test_cluster.py): the two monthly tables of tests/corpus/tables.py and
# the corpora the tests compare with.  Read only: a test that changes one copies it first.


@pytest.fixture(scope="session")
def month_tables(tmp_path_factory) -> tuple[Path, Path]:
    """The two monthly extraction tables of :func:`.corpus.tables.two_months`: ``(month1, month2)``."""
    from .corpus.tables import two_months

    def write(out: Path) -> None:
        two_months(out)

    root, _ = built_once(tmp_path_factory, "months", write)
    return root / "month1", root / "month2"


@pytest.fixture(scope="session")
def month1_corpus(spark, month_tables, tmp_path_factory) -> tuple[Path, dict]:
    """Month 1's corpus (default settings: near dedup): ``(directory, report)``."""
    return built_once(
        tmp_path_factory, "month1-corpus", lambda out: _build_corpus(spark, [month_tables[0]], out)
    )


@pytest.fixture(scope="session")
def month2_corpus(spark, month_tables, tmp_path_factory) -> tuple[Path, dict]:
    """Month 2's corpus on its own (nothing it is built against): ``(directory, report)``."""
    return built_once(
        tmp_path_factory, "month2-corpus", lambda out: _build_corpus(spark, [month_tables[1]], out)
    )


@pytest.fixture(scope="session")
def month2_against_month1(spark, month_tables, month1_corpus, tmp_path_factory) -> tuple[Path, dict]:
    """Month 2's corpus built ``--against`` month 1's (:func:`month1_corpus`): ``(directory, report)``."""
    return built_once(
        tmp_path_factory,
        "month2-against-month1",
        lambda out: _build_corpus(spark, [month_tables[1]], out, against=[str(month1_corpus[0])]),
    )


@pytest.fixture(scope="session")
def months_corpus(spark, month_tables, tmp_path_factory):
    """The two months' uninterrupted corpus (near dedup), the reference of the fault tests:
    ``(month1, month2, corpus directory, report)``."""
    out, report = built_once(
        tmp_path_factory, "months-corpus", lambda out: _build_corpus(spark, list(month_tables), out)
    )
    return month_tables[0], month_tables[1], out, report


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

        def _reschedule(self, node) -> None:
            """The next file only once the worker holds the last test of its files (pytest-xdist's
            own waits for two: a worker then starts another file behind its last two tests, which
            on this suite can be two minutes of cluster tests while the other worker runs dry)."""
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > 1:
                return
            self._assign_work_unit(node)

    return ClusterFilesTogether(config, log)
