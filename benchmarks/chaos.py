"""Chaos runs: the faults of ``tests/faults/`` again and again, each at a random moment, and a
table of what came out.

    .venv/bin/python benchmarks/chaos.py --runs 20 [--cases a,b] [--seed S] [--workdir DIR]

Every run of a case injects its fault once, at a random point of the job (a random time after it
started, a random amount of free space, a random number of failures), then classifies the
result:

* ``equal``: the output (after ``--resume``/``--overwrite`` where the case kills the job) equals
  an uninterrupted run's -- the extraction table's rows, the corpus's documents and report counts;
* ``per-file``: the documented per-file outcome -- the changed file's ``error`` row naming it,
  counted among the summary's file errors, its records before a cut exact, every other file whole;
* ``clean failure``: one line (no traceback), exit code 2, nothing that looks finished (no
  ``_summary.json`` / ``_SUCCESS``, nothing staged), and the documented next step (free space,
  ``--resume``/``--overwrite``) then gives the uninterrupted output;
* ``else``: anything other -- the goal is 0 in every row.

The uninterrupted references are computed once and shared by all runs; inputs are small (copies of
the bundled sample WARC, the corpus tests' two monthly tables).  Rounds run every case once, in
order, and the table is printed after each round (so a cut-short session still has a table for
the rounds it finished).  The cluster cases start one standalone cluster (a master, two one-core
workers on 127.0.0.1) and keep it; a killed worker is replaced by a new one.  The disk cases mount
small tmpfs filesystems (root; skipped otherwise).  HTTP retries use ``CONTENTX_HTTP_BACKOFF=0.05``
in this process's Spark workers, to keep the runs short.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("CONTENTX_HTTP_BACKOFF", "0.05")  # before Spark starts its workers

EQUAL, PER_FILE, CLEAN, ELSE = "equal", "per-file", "clean failure", "else"
COLUMNS = (EQUAL, PER_FILE, CLEAN, ELSE)


@dataclass
class Context:
    spark: object
    root: Path
    rng: random.Random
    cache: dict = field(default_factory=dict)
    cluster: object = None

    def once(self, key: str, make: Callable[[], object]):
        """A reference or fixture computed on first use and shared by every later run."""
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    def window(self, key: str, first: float) -> float:
        """Seconds the job of ``key`` took last time (``first`` before it ran here): the range
        the random fault time is drawn from (later runs are faster than the first, warm JVM)."""
        return self.cache.get(f"took:{key}", first)

    def took(self, key: str, seconds: float) -> None:
        self.cache[f"took:{key}"] = seconds

    def fresh(self, name: str) -> Path:
        path = self.root / "runs" / f"{name}-{uuid.uuid4().hex[:8]}"
        path.mkdir(parents=True)
        return path


# -- helpers -----------------------------------------------------------------------------------


def in_process(argv: list[str]) -> tuple[int, list[str]]:
    """``contentx ARGV`` in this process (its Spark session); exit code and the stderr lines."""
    from contentx_udf import cli

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    return code, err.getvalue().splitlines()


def one_line(lines: list[str], prefix: str = "") -> bool:
    """Exactly one error line, no stack trace."""
    errors = [ln for ln in lines if "error:" in ln and ln.startswith(prefix)]
    return len(errors) == 1 and not any("Traceback" in ln for ln in lines)


def table(spark, out: Path) -> list[tuple]:
    """(file, offset, method, status, error, text, title) of every row (an error row's offset may
    be null: sorted by their text)."""
    from tests.spark.test_job import read_table

    df = read_table(spark, out).select(
        "warc_filename", "warc_record_offset", "method", "status", "error", "text", "title"
    )
    return sorted((tuple(r) for r in df.collect()), key=repr)


def corpus_state(out: Path) -> tuple[list[tuple], dict]:
    """The corpus's documents (url, text hash, cluster size) and its report's counts."""
    import pyarrow.dataset as ds

    docs = ds.dataset(str(out / "documents"), format="parquet").to_table(
        columns=["url", "text_hash", "duplicate_count"]
    )
    report = json.loads((out / "_report.json").read_text())
    counts = {k: report[k] for k in ("input_rows", "kept", "dropped", "cluster_sizes", "languages")}
    return sorted(tuple(r.values()) for r in docs.to_pylist()), counts


def first_pass_seconds(lines: list[str], elapsed: float) -> float:
    """When the corpus job printed ``first pass written (N s)`` (its progress line), else ``elapsed``:
    the window in which a change of its inputs can meet the read."""
    for line in lines:
        if "first pass written" in line and line.rstrip().endswith(" s)"):
            return float(line.rstrip()[: -len(" s)")].rsplit("(", 1)[1])
    return elapsed


def corpus_unfinished(out: Path) -> bool:
    return not (out / "_SUCCESS").exists() and not (out / "documents").exists()


def samples(ctx: Context, n: int) -> list[Path]:
    """``n`` fresh copies of the sample WARC for one run."""
    from tests.spark.test_job import SAMPLE

    folder = ctx.fresh("in")
    paths = [folder / f"part-{i}.warc.gz" for i in range(n)]
    for p in paths:
        shutil.copy(SAMPLE, p)
    return paths


def months(ctx: Context) -> tuple[Path, Path]:
    from tests.corpus.tables import two_months

    return ctx.once("months", lambda: two_months(ctx.root / "months"))


def local_env(**extra: str) -> dict[str, str]:
    from tests.spark.cluster import loopback_env

    return loopback_env(**extra)


def timed_subprocess(cmd: list[str], env: dict | None = None) -> float:
    started = time.monotonic()
    done = subprocess.run(cmd, env=env or local_env(), capture_output=True, text=True, cwd=REPO, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"uninterrupted run failed: {done.stderr[-2000:]}")
    return time.monotonic() - started


def kill_group_after(proc: subprocess.Popen, delay: float) -> bool:
    """SIGKILL the process group after ``delay`` s; False when it ended before."""
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return True


@contextlib.contextmanager
def small_fs(ctx: Context, size_kb: int, free_kb: int):
    """A tmpfs of ``size_kb`` KB filled to ``free_kb`` KB free; yields (mount, filler)."""
    mount = ctx.fresh("fs")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", f"chaos-{uuid.uuid4().hex[:6]}", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise Skip(f"cannot mount a tmpfs (needs root): {done.stderr.strip()[:100]}")
    try:
        filler = mount / "filler"
        filler.write_bytes(b"\0" * max(0, (size_kb - free_kb) * 1024))
        yield mount, filler
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


class Skip(Exception):
    """The case cannot run here (no root, no Java)."""


# -- cases -------------------------------------------------------------------------------------

EXTRACT_FILES = 6


def extract_driver_killed(ctx: Context) -> tuple[str, str]:
    """The extraction driver's process group killed at a random time; then ``--resume``."""
    from tests.spark.cluster import JOB

    inputs = ctx.once("driver-kill-inputs", lambda: samples(ctx, EXTRACT_FILES))  # read only: shared
    out = ctx.fresh("out") / "table"
    args = [
        "--input",
        *map(str, inputs),
        "--output",
        str(out),
        "--methods",
        "cectd-ds",
        "--files-per-batch",
        "1",
    ]

    def reference():
        ref = ctx.fresh("ref") / "table"
        seconds = timed_subprocess([sys.executable, str(JOB), *args[:-6], "--output", str(ref), *args[-4:]])
        return table(ctx.spark, ref), seconds

    rows, seconds = ctx.once("extract-reference", reference)
    proc = subprocess.Popen(
        [sys.executable, str(JOB), *args],
        env=local_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        cwd=REPO,
    )
    delay = ctx.rng.uniform(0.0, seconds)
    killed = kill_group_after(proc, delay)
    if killed and (out / "_summary.json").exists():
        return ELSE, "a killed run left a summary"
    code, lines = in_process(["run", *args, "--resume"])
    if code == 0 and table(ctx.spark, out) == rows:
        return EQUAL, f"killed at {delay:.1f} s" if killed else "ended before the kill"
    return ELSE, f"resume exit {code}: {lines[-3:]}"


def corpus_driver_killed(ctx: Context) -> tuple[str, str]:
    """The corpus driver killed at a random point of its duplicate graph; then ``--overwrite``."""
    from tests.spark.cluster import CORPUS_JOB

    month1, month2 = months(ctx)
    args = ["--input", str(month1), str(month2), "--dedup", "near"]

    def reference():
        ref = ctx.fresh("ref") / "corpus"
        proc = subprocess.Popen(
            [sys.executable, str(CORPUS_JOB), *args, "--output", str(ref)],
            env=local_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        first = graph = None
        for line in proc.stderr:
            if "first pass written" in line:
                first = time.monotonic()
            if "duplicates found" in line:
                graph = time.monotonic() - first
        proc.wait()
        return corpus_state(ref), graph

    state, graph_seconds = ctx.once("corpus-reference", reference)
    out = ctx.fresh("out") / "corpus"
    proc = subprocess.Popen(
        [sys.executable, str(CORPUS_JOB), *args, "--output", str(out)],
        env=local_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=REPO,
    )
    for line in proc.stderr:
        if "first pass written" in line:
            break
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    delay = ctx.rng.uniform(0.0, graph_seconds)
    killed = kill_group_after(proc, delay)
    if killed and (out / "_SUCCESS").exists():  # killed in the commit: documents/ may be in place
        return ELSE, "a killed run looks finished"
    code, lines = in_process(["corpus", *args, "--output", str(out), "--overwrite"])
    if code == 0 and corpus_state(out) == state and not (out / "_staging").exists():
        return EQUAL, f"killed {delay:.1f} s into the graph" if killed else "ended before the kill"
    return ELSE, f"overwrite exit {code}: {lines[-3:]}"


def _cluster(ctx: Context):
    from tests.spark.cluster import StandaloneCluster

    if ctx.cluster is None:
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            raise Skip("Java is not installed")
        ctx.cluster = StandaloneCluster(ctx.root / "cluster", workers=2, cores=1, memory="1g").start()
    cluster = ctx.cluster
    deadline = time.monotonic() + 120
    while sum(w.get("state") == "ALIVE" for w in cluster.state().get("workers", [])) < 2:
        if time.monotonic() > deadline:
            raise RuntimeError("the cluster has fewer than two live workers")
        time.sleep(0.5)
    return cluster


def _lost_on_cluster(ctx: Context, corpus: bool, victim: str) -> tuple[str, str]:
    from tests.faults.test_worker_lost import registered_executor_pids
    from tests.spark.cluster import CORPUS_JOB, JOB

    cluster = _cluster(ctx)
    out = ctx.fresh("out") / "o"
    if corpus:
        month1, month2 = months(ctx)
        args = ["--input", str(month1), str(month2), "--output", str(out)]

        def reference():
            from contentx_udf.corpus import job as corpus_job
            from contentx_udf.corpus.config import CorpusConfig

            ref = ctx.fresh("ref") / "corpus"
            corpus_job.run(CorpusConfig(inputs=[str(month1), str(month2)], output=str(ref)), ctx.spark)
            return corpus_state(ref)

        expected = ctx.once("cluster-corpus-reference", reference)
        result = lambda: corpus_state(out)  # noqa: E731
    else:
        inputs = ctx.once("cluster-inputs", lambda: samples(ctx, 4))
        args = [
            "--input",
            *map(str, inputs),
            "--output",
            str(out),
            "--methods",
            "combined",
            "--num-partitions",
            "4",
        ]

        def reference():
            from contentx_udf.spark import job
            from contentx_udf.spark.config import JobConfig

            ref = ctx.fresh("ref") / "table"
            job.run(
                JobConfig(inputs=[str(p) for p in inputs], output=str(ref), methods=("combined",)),
                spark=ctx.spark,
            )
            return table(ctx.spark, ref)

        expected = ctx.once("cluster-extract-reference", reference)
        result = lambda: table(ctx.spark, out)  # noqa: E731
    delay = ctx.rng.uniform(0.0, 3.0)
    with cluster.submit_async(args, job=CORPUS_JOB if corpus else JOB) as proc:
        deadline = time.monotonic() + 300
        while (
            not ((out / "_staging").exists() or (out / "_contentx" / "staging").exists())
            or len(registered_executor_pids(cluster)) < 2
        ):
            if proc.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        time.sleep(delay)
        killed = proc.poll() is None
        if killed and victim == "executor":
            pids = registered_executor_pids(cluster)
            os.kill(ctx.rng.choice(pids), signal.SIGKILL)
        elif killed:
            workers = [p for p in cluster.procs[1:] if p.poll() is None]
            os.killpg(ctx.rng.choice(workers).pid, signal.SIGKILL)
            time.sleep(2)
            cluster.add_worker(f"worker-late-{len(cluster.procs)}")
        stdout, stderr = proc.communicate(timeout=600)
    if proc.returncode != 0:
        return ELSE, f"exit {proc.returncode}: {stderr[-300:]}"
    if result() == expected:
        when = f"killed {delay:.1f} s after both executors registered"
        return EQUAL, when if killed else "ended before the kill"
    return ELSE, "output differs from the uninterrupted run's"


def extract_executor_lost(ctx):
    """Extraction on the cluster, one executor JVM killed at a random time after tasks start."""
    return _lost_on_cluster(ctx, corpus=False, victim="executor")


def extract_worker_lost(ctx):
    """Extraction on the cluster, a whole worker killed (a new one joins 2 s later)."""
    return _lost_on_cluster(ctx, corpus=False, victim="worker")


def corpus_executor_lost(ctx):
    """The corpus job on the cluster, one executor JVM killed at a random time."""
    return _lost_on_cluster(ctx, corpus=True, victim="executor")


def corpus_worker_lost(ctx):
    """The corpus job on the cluster, a whole worker killed (a new one joins 2 s later)."""
    return _lost_on_cluster(ctx, corpus=True, victim="worker")


def _extract_reference(ctx: Context, n: int):
    """Rows per file name of the uninterrupted local run over ``n`` sample copies, and its time."""
    from contentx_udf.spark import job
    from tests.spark.test_job import config

    def make():
        inputs = samples(ctx, n)
        ref = ctx.fresh("ref") / "table"
        started = time.monotonic()
        job.run(config(inputs, ref, methods=("cectd-ds",)), spark=ctx.spark)
        rows = table(ctx.spark, ref)
        return [r[1:] for r in rows if r[0] == str(inputs[0])], time.monotonic() - started

    return ctx.once(f"sample-reference-{n}", make)


def _changed_input(ctx: Context, change: Callable[[Path], None]) -> tuple[str, str]:
    """The extraction job on three files while ``change`` hits one of them at a random time."""
    from contentx_udf.spark import job
    from contentx_udf.spark.inputs import expand_inputs
    from tests.spark.test_job import config

    per_file, seconds = _extract_reference(ctx, 3)
    inputs = samples(ctx, 3)
    out = ctx.fresh("out") / "table"
    cfg = config(inputs, out, methods=("cectd-ds",))
    files = expand_inputs(cfg.inputs, None)
    victim = ctx.rng.choice(inputs)
    delay = ctx.rng.uniform(0.0, ctx.window("extract-3", seconds))
    timer = threading.Timer(delay, change, (victim,))
    timer.start()
    started = time.monotonic()
    summary = job.run(cfg, spark=ctx.spark, files=files)
    ctx.took("extract-3", time.monotonic() - started)
    timer.join()
    rows = table(ctx.spark, out)
    for path in inputs:
        mine = [r[1:] for r in rows if r[0] == str(path)]
        if path != victim:
            if mine != per_file:
                return ELSE, f"another file's rows differ ({path.name})"
            continue
        if mine == per_file and str(path) not in summary["file_errors"]:
            return EQUAL, f"changed at {delay:.1f} s, after it was read"
        ok = [r for r in mine if r[2] == "ok"]
        errors = [r for r in mine if r[2] == "error"]
        named = str(path) in summary["file_errors"]
        if all(r in per_file for r in ok) and (errors or named) and named == bool(errors):
            return PER_FILE, f"changed at {delay:.1f} s: {len(ok)} whole records, {len(errors)} error row(s)"
        return ELSE, f"changed file: {len(ok)} ok, {len(errors)} errors, in summary: {named}"
    return ELSE, "unreachable"


def warc_deleted(ctx):
    """One WARC of the listing deleted at a random time of the run."""
    return _changed_input(ctx, lambda p: p.unlink())


def warc_truncated(ctx):
    """One WARC cut to a random length at a random time of the run."""
    cut = ctx.rng.uniform(0.05, 0.95)

    def truncate(path: Path) -> None:
        with open(path, "r+b") as f:
            f.truncate(int(path.stat().st_size * cut))

    return _changed_input(ctx, truncate)


def _two_part_table(root: Path) -> tuple[Path, Path]:
    from tests.faults.inputs import two_part_table as make

    return make(root)


def parquet_replaced(ctx):
    """One Parquet part of the corpus job's input replaced at a random time of the run."""
    from tests.faults.inputs import replace_part as _replace

    def references():
        old_table, old_part = _two_part_table(ctx.fresh("ref") / "table")
        started = time.monotonic()
        code, lines = in_process(
            ["corpus", "--input", str(old_table), "--output", str(old_table.parent / "c")]
        )
        assert code == 0, lines[-5:]
        seconds = first_pass_seconds(lines, time.monotonic() - started)
        _replace(old_part)
        code, lines = in_process(
            ["corpus", "--input", str(old_table), "--output", str(old_table.parent / "c2")]
        )
        assert code == 0, lines[-5:]
        return corpus_state(old_table.parent / "c"), corpus_state(old_table.parent / "c2"), seconds

    old, new, seconds = ctx.once("replaced-references", references)
    tbl, part = _two_part_table(ctx.fresh("in") / "table")
    out = tbl.parent / "corpus"
    delay = ctx.rng.uniform(0.0, 1.5 * ctx.window("corpus-12", seconds))
    timer = threading.Timer(delay, _replace, (part,))
    timer.start()
    started = time.monotonic()
    code, lines = in_process(["corpus", "--input", str(tbl), "--output", str(out)])
    ctx.took("corpus-12", first_pass_seconds(lines, time.monotonic() - started))
    timer.join()
    if code == 0:
        state = corpus_state(out)
        if state == old:
            return EQUAL, f"replaced at {delay:.1f} s, after the first pass"
        if state == new:
            return EQUAL, f"replaced at {delay:.1f} s, before the listing: the new table's corpus"
        return ELSE, "a corpus of neither table"
    if code == 2 and one_line(lines) and corpus_unfinished(out) and not (out / "_staging").exists():
        said = next(ln for ln in lines if "error:" in ln)
        code, lines = in_process(["corpus", "--input", str(tbl), "--output", str(out), "--overwrite"])
        if code == 0 and corpus_state(out) == new:
            return CLEAN, f"replaced at {delay:.1f} s: {said[:120]}"
    return ELSE, f"exit {code}: {lines[-3:]}"


def output_disk_full(ctx):
    """The extraction output on a tmpfs with a random amount of free space; then ``--resume``."""
    from tests.spark.test_job import SAMPLE

    per_file, _ = _extract_reference(ctx, 1)
    free_kb = ctx.rng.randint(8, 300)
    with small_fs(ctx, 1024, free_kb) as (mount, filler):
        out = mount / "out"
        argv = ["run", "--input", str(SAMPLE), "--output", str(out), "--methods", "cectd-ds"]
        code, lines = in_process(argv)
        rows = lambda: [r[1:] for r in table(ctx.spark, out)]  # noqa: E731
        if code == 0:
            return (EQUAL, f"{free_kb} KB free: enough") if rows() == per_file else (ELSE, "differs")
        unfinished = not (out / "_summary.json").exists() and not list(out.rglob("*.tmp"))
        if not (code == 2 and one_line(lines) and unfinished and "no space left on device" in "".join(lines)):
            return ELSE, f"{free_kb} KB free: exit {code}: {lines[-2:]}"
        filler.unlink()
        code, lines = in_process([*argv, "--resume"])
        if code == 0 and rows() == per_file:
            return CLEAN, f"{free_kb} KB free"
        return ELSE, f"resume exit {code}: {lines[-2:]}"


def extract_disk_fills(ctx):
    """The extraction job (three files, one a batch, its own process) with its output and Spark's
    local directory on one tmpfs that another writer fills up at a random time of the run; then
    ``--resume`` after the space is freed."""
    from tests.faults.test_disk_fills import fill_up
    from tests.spark.cluster import JOB

    inputs = ctx.once("disk-fills-inputs", lambda: samples(ctx, 3))  # read only: shared
    args = ["--input", *map(str, inputs), "--methods", "cectd-ds", "--files-per-batch", "1"]

    def reference():
        ref = ctx.fresh("ref") / "table"
        seconds = timed_subprocess([sys.executable, str(JOB), *args, "--output", str(ref)])
        return table(ctx.spark, ref), seconds

    rows, seconds = ctx.once("disk-fills-reference", reference)
    with small_fs(ctx, 2048, 2048) as (mount, _filler):
        out = mount / "out"
        proc = subprocess.Popen(
            [sys.executable, str(JOB), *args, "--output", str(out)],
            env=local_env(SPARK_LOCAL_DIRS=str(mount / "local")),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        errors: list[str] = []
        reader = threading.Thread(target=lambda: errors.extend(proc.stderr), daemon=True)
        reader.start()
        started = time.monotonic()
        delay = ctx.rng.uniform(0.0, ctx.window("disk-fills", seconds))
        while time.monotonic() < started + delay and proc.poll() is None:
            time.sleep(0.02)
        filled = proc.poll() is None
        if not filled:  # the cold reference was slower than this run: draw from this run's time
            ctx.took("disk-fills", time.monotonic() - started)
        filler = fill_up(mount) if filled else None
        proc.wait(timeout=900)
        reader.join()
        lines = [ln.rstrip("\n") for ln in errors]
        when = f"filled at {delay:.1f} s" if filled else "ended before the disk filled"
        if proc.returncode == 0:
            return (EQUAL, when) if table(ctx.spark, out) == rows else (ELSE, f"{when}: differs")
        said = [ln for ln in lines if ln.startswith("contentx run: error:")]
        clean = (
            proc.returncode == 2
            and one_line(lines, "contentx run:")
            and len(said) == 1
            and f"no space left on device writing {mount}" in said[0]
            and not (out / "_summary.json").exists()
            and not list(out.rglob("*.tmp"))
        )
        if not clean:
            return ELSE, f"{when}: exit {proc.returncode}: {lines[-2:]}"
        markers = len(list((out / "_contentx" / "batches").glob("*.json")))
        filler.unlink()
        code, after = in_process(["run", *args, "--output", str(out), "--resume"])
        if code == 0 and table(ctx.spark, out) == rows:
            reason = said[0][len("contentx run: error: ") :][:90]
            return CLEAN, f"{when}, {markers} batch(es) committed: {reason}"
        return ELSE, f"{when}: resume exit {code}: {after[-2:]}"


def local_dir_full(ctx):
    """The corpus job with Spark's local directory on a tmpfs with a random amount of free space;
    then ``--overwrite`` after the space is freed."""
    from tests.spark.cluster import CORPUS_JOB

    month1, _ = months(ctx)

    def reference():
        ref = ctx.fresh("ref") / "corpus"
        assert in_process(["corpus", "--input", str(month1), "--output", str(ref)])[0] == 0
        return corpus_state(ref)

    expected = ctx.once("local-dir-reference", reference)
    free_kb = ctx.rng.randint(8, 1000)
    with small_fs(ctx, 2048, free_kb) as (mount, filler):
        out = ctx.fresh("out") / "corpus"
        cmd = [sys.executable, str(CORPUS_JOB), "--input", str(month1), "--output", str(out)]
        env = local_env(SPARK_LOCAL_DIRS=str(mount / "local"))
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO, timeout=900)
        lines = done.stderr.splitlines()
        if done.returncode == 0:
            return (
                (EQUAL, f"{free_kb} KB free: enough") if corpus_state(out) == expected else (ELSE, "differs")
            )
        if not (done.returncode == 2 and one_line(lines, "contentx corpus:") and corpus_unfinished(out)):
            return ELSE, f"{free_kb} KB free: exit {done.returncode}: {lines[-2:]}"
        filler.unlink()
        done = subprocess.run(
            [*cmd, "--overwrite"], env=env, capture_output=True, text=True, cwd=REPO, timeout=900
        )
        if done.returncode == 0 and corpus_state(out) == expected:
            return CLEAN, f"{free_kb} KB free"
        return ELSE, f"overwrite exit {done.returncode}: {done.stderr[-300:]}"


def http_flaky(ctx):
    """An HTTP input answering 503 or dropping the connection a random number of times (0-8;
    the default budget is 6 attempts); another file local."""
    from contentx_udf.spark import job
    from tests.spark.test_job import SAMPLE, config
    from tests.warc.test_http import Flaky, start_server

    per_file, _ = _extract_reference(ctx, 1)
    failures = ctx.rng.randint(0, 8)
    plan = [ctx.rng.choice(["503", "drop"]) for _ in range(failures)]
    server = start_server(Flaky(SAMPLE.read_bytes(), plan))
    url = f"http://127.0.0.1:{server.server_address[1]}/file.warc.gz"
    try:
        out = ctx.fresh("out") / "table"
        summary = job.run(config([url], out, methods=("cectd-ds",)), spark=ctx.spark)
        rows = [r[1:] for r in table(ctx.spark, out)]
    finally:
        server.shutdown()
        server.server_close()
    if rows == per_file and not summary["file_errors"]:
        return EQUAL, f"{failures} failures: {','.join(plan)}"
    errors = [r for r in rows if r[2] == "error"]
    if failures >= 6 and errors and "attempts" in (errors[-1][3] or "") and url in summary["file_errors"]:
        return PER_FILE, f"{failures} failures: gave up after the attempts"
    return ELSE, f"{failures} failures ({plan}): {len(rows)} rows, {summary['file_errors']}"


def viewfs_unreadable(ctx):
    """A ``viewfs://`` input's part renamed away at a random time after the listing, for a random
    0-4 s, then back (root ignores ``chmod 000``)."""
    from contentx_udf.corpus import tables

    spark = ctx.spark
    mount = f"chaos{uuid.uuid4().hex[:8]}"
    data = ctx.fresh("data")
    spark.sparkContext._jsc.hadoopConfiguration().set(
        f"fs.viewfs.mounttable.{mount}.link./data", data.as_uri()
    )

    def reference():
        tbl, _ = _two_part_table(ctx.fresh("ref") / "table")
        started = time.monotonic()
        assert in_process(["corpus", "--input", str(tbl), "--output", str(tbl.parent / "c")])[0] == 0
        return corpus_state(tbl.parent / "c"), time.monotonic() - started

    expected, seconds = ctx.once("viewfs-reference", reference)
    _tbl, part = _two_part_table(data / "table")
    delay, away = ctx.rng.uniform(0.0, 1.5 * ctx.window("corpus-12", seconds)), ctx.rng.uniform(0.0, 4.0)
    hidden = part.with_name("." + part.name + ".away")
    timers = []

    def hide():
        os.rename(part, hidden)
        back = threading.Timer(away, os.rename, (hidden, part))
        back.start()
        timers.append(back)

    original = tables.find_damaged

    def after_the_listing(*args, **kw):
        if not timers:
            t = threading.Timer(delay, hide)
            t.start()
            timers.append(t)
        return original(*args, **kw)

    tables.find_damaged = after_the_listing
    out = ctx.fresh("out") / "corpus"
    try:
        started = time.monotonic()
        code, lines = in_process(["corpus", "--input", f"viewfs://{mount}/data/table", "--output", str(out)])
        if code == 0:
            ctx.took("corpus-12", first_pass_seconds(lines, time.monotonic() - started))
    finally:
        tables.find_damaged = original
        for t in list(timers):
            t.join()
        for t in list(timers):
            t.join()
    if code == 0 and corpus_state(out) == expected:
        return EQUAL, f"away {away:.1f} s from {delay:.1f} s"
    if code == 2 and one_line(lines) and corpus_unfinished(out):
        return (
            CLEAN,
            f"away {away:.1f} s from {delay:.1f} s: {[ln for ln in lines if 'error:' in ln][0][:90]}",
        )
    return ELSE, f"away {away:.1f} s from {delay:.1f} s: exit {code}: {lines[-2:]}"


CASES: dict[str, Callable[[Context], tuple[str, str]]] = {
    "parquet-replaced": parquet_replaced,
    "http-flaky": http_flaky,
    "viewfs-unreadable": viewfs_unreadable,
    "output-disk-full": output_disk_full,
    "local-dir-full": local_dir_full,
    "extract-disk-fills": extract_disk_fills,
    "warc-deleted": warc_deleted,
    "warc-truncated": warc_truncated,
    "extract-driver-killed": extract_driver_killed,
    "corpus-driver-killed": corpus_driver_killed,
    "extract-executor-lost": extract_executor_lost,
    "extract-worker-lost": extract_worker_lost,
    "corpus-executor-lost": corpus_executor_lost,
    "corpus-worker-lost": corpus_worker_lost,
}


def render(results: dict[str, Counter], seconds: dict[str, float]) -> str:
    head = f"| case | runs | {' | '.join(COLUMNS)} | s/run |"
    lines = [head, "|---" * (len(COLUMNS) + 3) + "|"]
    for name, counts in results.items():
        runs = sum(counts.values())
        per_run = seconds[name] / runs if runs else 0.0
        cells = " | ".join(str(counts[c]) for c in COLUMNS)
        lines.append(f"| {name} | {runs} | {cells} | {per_run:.0f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of every case (default 3)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a new one)")
    parser.add_argument("--workdir", default=None, help="scratch directory (default: a temporary one)")
    parser.add_argument("--log", default=None, help="append each run's outcome to this file")
    args = parser.parse_args()
    names = [n.strip() for n in args.cases.split(",") if n.strip()]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}; cases: {', '.join(CASES)}")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    print(f"chaos: seed {seed}, {args.runs} run(s) of {len(names)} case(s)", flush=True)

    from contentx_udf.runtime.session import prepare_driver

    prepare_driver()
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("contentx-chaos")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    root = Path(args.workdir or tempfile.mkdtemp(prefix="contentx-chaos-"))
    ctx = Context(spark, root, random.Random(seed))
    results = {n: Counter() for n in names}
    seconds = {n: 0.0 for n in names}
    skipped: dict[str, str] = {}
    log = open(args.log, "a") if args.log else None
    try:
        for round_no in range(1, args.runs + 1):
            for name in names:
                if name in skipped:
                    continue
                started = time.monotonic()
                try:
                    outcome, note = CASES[name](ctx)
                except Skip as exc:
                    skipped[name] = str(exc)
                    continue
                except Exception as exc:  # the run itself broke: counted, never hidden
                    outcome, note = ELSE, f"{type(exc).__name__}: {str(exc)[:300]}"
                    traceback.print_exc()
                seconds[name] += time.monotonic() - started
                results[name][outcome] += 1
                line = f"round {round_no} {name}: {outcome} ({note}) {time.monotonic() - started:.0f} s"
                print(line, flush=True)
                if log:
                    print(line, file=log, flush=True)
            print(f"\nafter round {round_no}:\n" + render(results, seconds) + "\n", flush=True)
            for name, why in skipped.items():
                print(f"skipped {name}: {why}", flush=True)
    finally:
        if ctx.cluster is not None:
            ctx.cluster.stop()
        spark.stop()
        if args.workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0 if all(c[ELSE] == 0 for c in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
