"""A Spark standalone cluster on 127.0.0.1 for the tests: one master, N one-core workers.

The commands of docs/cluster.md are these: ``spark-class ...deploy.master.Master`` and
``...deploy.worker.Worker`` from the pyspark package, ``spark-submit --master spark://...``.
Ports are chosen free at run time, logs go under the given directory, and ``stop()`` kills
the daemons' process groups (call it in a ``finally``/fixture teardown).
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from contentx_udf.runtime import class_archive

from ..conftest import SESSION_JAVA_OPTIONS, SESSION_SQL_CONF, SESSION_SUBMIT_ARGS

REPO = Path(__file__).resolve().parents[2]
JOB = REPO / "jobs" / "extract_warc.py"
CORPUS_JOB = REPO / "jobs" / "build_corpus.py"
SPARK_DEFAULTS = REPO / "conf" / "spark-defaults.conf"
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def spark_bin(name: str) -> str:
    """``spark-class`` / ``spark-submit``: next to this interpreter (the venv), else pyspark's bin."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / name)


def loopback_env(**extra: str) -> dict[str, str]:
    """The environment of every process the tests start: bound to loopback, no proxy."""
    env = dict(os.environ)
    for key in ("SPARK_CONF_DIR", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        env.pop(key, None)
    env.update(SPARK_LOCAL_IP=LOOPBACK, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.update(extra)
    return env


def quick_jit_env(**extra: str) -> dict[str, str]:
    """:func:`loopback_env` for a job whose driver JVM this process's child launches, that JVM
    compiling with the JIT's quick tier only (:data:`SESSION_JAVA_OPTIONS`, given as the user's
    ``spark.driver.extraJavaOptions`` in ``PYSPARK_SUBMIT_ARGS``, which keeps the class archive):
    for the corpus job, whose driver runs C2 as well (the extraction job's and ``contentx
    jvm-archive``'s have the quick tier already); a test that kills a job in a stage checks the kill
    came in it."""
    return loopback_env(
        PYSPARK_SUBMIT_ARGS=SESSION_SUBMIT_ARGS,
        **extra,
    )


@functools.cache
def class_archive_launch() -> tuple[str, dict[str, str]]:
    """``(JVM options, environment)`` with which every JVM of the cluster -- its daemons, the
    jobs' spark-submit drivers and the executors the workers launch -- maps the drivers' class
    archive (:mod:`contentx_udf.runtime.class_archive`, written by ``./dev.sh`` or ``contentx
    jvm-archive``) instead of loading Spark's classes from the jars; ``("", {})`` when there is none.

    The archive holds the classes of the class path ``empty-conf/`` + pyspark's jars: the daemons
    and spark-submit are started with that ``SPARK_CONF_DIR`` (the jobs get their settings as
    ``--properties-file`` anyway), and a worker gives its executors its own class path.  Measured
    on the 2-core machine (a two-worker cluster, one extraction job on the sample WARC): 23.8 ->
    15.3 CPU-s (daemons 8.0 -> 5.6, driver 7.6 -> 3.9, executors 6.0 -> 3.7)."""
    archive = class_archive.existing()
    if archive is None:
        return "", {}
    empty = archive.parent / "empty-conf"
    empty.mkdir(exist_ok=True)
    return f"-XX:SharedArchiveFile={archive} {class_archive.QUIET}", {"SPARK_CONF_DIR": str(empty)}


def cluster_java_options() -> str:
    """The JVM options of the cluster's daemons, drivers and executors: the suite's own
    (:data:`SESSION_JAVA_OPTIONS`, the JIT's quick tier) and the class archive's."""
    return f"{SESSION_JAVA_OPTIONS} {class_archive_launch()[0]}".strip()


def cluster_env(**extra: str) -> dict[str, str]:
    """:func:`loopback_env` for a process of the cluster (a daemon, a spark-submit): with the class
    archive's ``SPARK_CONF_DIR`` (:func:`class_archive_launch`)."""
    return loopback_env(**{**class_archive_launch()[1], **extra})


def get_json(url: str, timeout: float = 5) -> dict:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy
    with opener.open(url, timeout=timeout) as resp:
        return json.loads(resp.read())


class StandaloneCluster:
    def __init__(self, workdir: Path, workers: int = 2, cores: int = 1, memory: str = "1g"):
        self.workdir = Path(workdir)
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.port = free_port()
        self.webui_port = free_port()
        self.url = f"spark://{LOOPBACK}:{self.port}"
        self.procs: list[subprocess.Popen] = []

    def _start(self, name: str, args: list[str]) -> None:
        log_dir = self.workdir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        env = cluster_env(
            SPARK_LOG_DIR=str(log_dir),
            SPARK_WORKER_DIR=str(self.workdir / name),
            SPARK_DAEMON_JAVA_OPTS=cluster_java_options(),
        )
        with open(log_dir / f"{name}.log", "wb") as log:
            self.procs.append(
                subprocess.Popen(
                    [spark_bin("spark-class"), *args],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # its own process group: stop() kills the JVM and its children
                )
            )

    def start(self, timeout: float = 120) -> StandaloneCluster:
        self._start(
            "master",
            ["org.apache.spark.deploy.master.Master", "--host", LOOPBACK, "--port", str(self.port),
             "--webui-port", str(self.webui_port)],
        )  # fmt: skip
        for i in range(self.workers):
            self.add_worker(f"worker{i}")
        deadline = time.monotonic() + timeout
        while True:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"a Spark daemon exited ({p.returncode}); logs: {self.workdir}/logs")
            try:
                state = self.state()
                if sum(w.get("state") == "ALIVE" for w in state.get("workers", [])) >= self.workers:
                    return self
            except OSError:
                pass  # master UI not up yet
            if time.monotonic() > deadline:
                raise RuntimeError(f"workers did not register in {timeout} s; logs: {self.workdir}/logs")
            time.sleep(0.5)

    def add_worker(self, name: str) -> subprocess.Popen:
        """Start one more worker (its own process group: killing it kills its executors too)."""
        self._start(
            name,
            ["org.apache.spark.deploy.worker.Worker", self.url, "--host", LOOPBACK,
             "--cores", str(self.cores), "--memory", self.memory, "--webui-port", str(free_port()),
             "--work-dir", str(self.workdir / name)],
        )  # fmt: skip
        return self.procs[-1]

    def state(self) -> dict:
        """The master's JSON status (workers, active and completed applications).  The port is
        the one the master's log says it bound (Spark takes the next port when the chosen one was
        taken in the meantime, e.g. by another Spark UI)."""
        log = self.workdir / "logs" / "master.log"
        if log.exists():
            bound = re.findall(r"MasterWebUI.*started at http://[^:]+:(\d+)", log.read_text(errors="replace"))
            if bound:
                self.webui_port = int(bound[-1])
        try:
            return get_json(f"http://{LOOPBACK}:{self.webui_port}/json/")
        except ValueError as exc:  # not the master's JSON: another server on that port
            raise OSError(f"port {self.webui_port} does not serve the master's status") from exc

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=5)

    def command(
        self,
        args: list[str],
        *,
        conf: dict[str, str] | None = None,
        archives: str | None = None,
        job: Path = JOB,
    ) -> list[str]:
        """``spark-submit --master spark://... jobs/extract_warc.py ARGS`` (or another ``job``).
        The driver's and the executors' JVMs compile with the JIT's quick tier only, as the suite's
        own session (tests/conftest.py :data:`SESSION_JAVA_OPTIONS`: the tests' jobs are small),
        and map the class archive (:func:`cluster_java_options`); the SQL engine generates no code
        (:data:`SESSION_SQL_CONF`, as in the session: none of these tests is about it)."""
        cmd = [spark_bin("spark-submit"), "--master", self.url, "--properties-file", str(SPARK_DEFAULTS),
               "--conf", f"spark.driver.host={LOOPBACK}", "--conf", f"spark.driver.bindAddress={LOOPBACK}",
               "--conf", "spark.executor.memory=512m",
               "--conf", f"spark.driver.extraJavaOptions={cluster_java_options()}",
               "--conf", f"spark.executor.extraJavaOptions={cluster_java_options()}"]  # fmt: skip
        for key, value in SESSION_SQL_CONF.items():  # (no generated code, as the suite's session)
            cmd += ["--conf", f"{key}={value}"]
        if archives:
            cmd += ["--archives", archives]
        for key, value in (conf or {}).items():
            cmd += ["--conf", f"{key}={value}"]
        return [*cmd, str(job), *args]

    def submit(
        self,
        args: list[str],
        *,
        conf: dict[str, str] | None = None,
        archives: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 300,
        job: Path = JOB,
    ) -> subprocess.CompletedProcess:
        """Run :meth:`command` to its end (output captured)."""
        return subprocess.run(
            self.command(args, conf=conf, archives=archives, job=job),
            env=cluster_env(**(env or {})),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO,
        )

    def submit_async(self, args: list[str], *, job: Path = JOB, **kw) -> subprocess.Popen:
        """Start :meth:`command` and return at once (pipes for its output; use as a context manager)."""
        return subprocess.Popen(
            self.command(args, job=job, **kw),
            env=cluster_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )


def run_local(args: list[str], env: dict[str, str] | None = None, timeout: float = 300):
    """The job without a master (embedded ``local[*,3]`` from conf/spark-defaults.conf)."""
    return subprocess.run(
        [sys.executable, str(JOB), *args],
        env=loopback_env(**(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def executor_pids(cluster: StandaloneCluster) -> list[int]:
    """Process ids of the executor JVMs the cluster's workers launched."""
    found = subprocess.run(["pgrep", "-f", "CoarseGrainedExecutorBackend"], capture_output=True, text=True)
    pids = [int(p) for p in found.stdout.split()]
    mine = []
    for pid in pids:
        try:  # an executor runs in its worker's work directory (never another cluster's JVM)
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd.startswith(str(cluster.workdir) + os.sep):
            mine.append(pid)
    return mine


def settled(cluster: StandaloneCluster, timeout: float = 120) -> StandaloneCluster:
    """``cluster`` once its workers are alive again and the last test's executors are gone (a
    fault test may have killed a worker and started another)."""
    deadline = time.monotonic() + timeout
    while sum(
        w.get("state") == "ALIVE" for w in cluster.state().get("workers", [])
    ) < cluster.workers or executor_pids(cluster):
        assert time.monotonic() < deadline, "the cluster did not settle"
        time.sleep(0.5)
    return cluster
