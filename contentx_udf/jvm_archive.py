"""Writing the driver JVM's class archive (``contentx jvm-archive``): one JVM, started to write the
archive at its exit, runs a small job of every command that starts Spark, looked up by name in
:mod:`.commands`.  How a driver JVM maps the archive is :mod:`.runtime.class_archive`'s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .commands import main_of
from .errors import UserError
from .paths import CONF_DIR
from .runtime.class_archive import ARCHIVE_ENV, apply, archive_dir, archive_path, launch_plan, spark_home
from .runtime.java import java_version_text
from .runtime.session import DRIVER_JAVA_OPTIONS_KEY, SHORT_JOB_JAVA_OPTIONS, prepare_driver

#: JVM options of the JVM that writes the archive, before the archive's own: a short run of small
#: jobs, so the JIT's quick tier only (:data:`.runtime.session.SHORT_JOB_JAVA_OPTIONS`), and the
#: serial collector (a small heap's young pauses cost less CPU than G1's concurrent threads).  The
#: archive holds classes, not compiled code or a collector's choice: the jobs' JVMs (G1, both JIT
#: tiers) map it all the same (tests/runtime/test_class_archive.py).
DUMP_JAVA_OPTIONS = f"{SHORT_JOB_JAVA_OPTIONS} -XX:+UseSerialGC"


def create(directory: Path | None = None, java_version: str | None = None, out=sys.stderr) -> Path:
    """Write the archive for this Java and Spark (a small run of the extraction job, a corpus
    build with ``--signals`` and a ``select`` in one JVM started with ``-XX:ArchiveClassesAtExit``),
    under a temporary name renamed when the JVM has written it; older archives in the
    directory are removed.  Returns its path; raises :class:`~contentx_udf.errors.UserError`."""
    directory = directory if directory is not None else archive_dir()
    if directory is None:
        raise UserError(f"{ARCHIVE_ENV}=off: no archive is written")
    directory.mkdir(parents=True, exist_ok=True)
    java_version = java_version if java_version is not None else java_version_text()
    final = archive_path(directory, spark_home(), java_version)
    temporary = final.with_name(f"{final.stem}.{os.getpid()}.tmp")
    conf_dir = Path(os.environ.get("SPARK_CONF_DIR") or CONF_DIR)
    plan = launch_plan(temporary, conf_dir, dump=True)
    if isinstance(plan, str):
        raise UserError(f"no JVM class archive can be written: {plan}")
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "contentx_udf.jvm_archive", "--dump", str(temporary), str(conf_dir)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 or not temporary.is_file() or temporary.stat().st_size == 0:
        temporary.unlink(missing_ok=True)
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise UserError(f"writing the JVM class archive failed (exit {proc.returncode}): {tail[0]}")
    os.replace(temporary, final)
    home = str(spark_home().resolve())
    final.with_suffix(".json").write_text(json.dumps({"spark_home": home, "java": java_version}))
    _remove_stale(directory, final, home)
    size = final.stat().st_size / 2**20
    print(
        f"contentx jvm-archive: wrote {final} ({size:.0f} MiB) in {time.perf_counter() - started:.0f} s",
        file=out,
    )
    return final


def _remove_stale(directory: Path, kept: Path, home: str) -> None:
    """Remove the archives this one replaces (the same Spark installation with other jars or
    another Java), those of Spark installations that are gone, and temporaries of killed runs
    older than a day; archives of other installations (other virtual environments) stay."""
    for sidecar in directory.glob("spark-*.json"):
        archive = sidecar.with_suffix(".jsa")
        if archive == kept:
            continue
        try:
            owner = json.loads(sidecar.read_text()).get("spark_home", "")
        except (OSError, ValueError):
            owner = ""
        if owner == home or not Path(owner).is_dir():
            archive.unlink(missing_ok=True)
            sidecar.unlink(missing_ok=True)
    for temporary in directory.glob("spark-*.tmp"):
        try:
            if time.time() - temporary.stat().st_mtime > 86400:
                temporary.unlink()
        except OSError:
            pass


def _dump(temporary: Path, conf_dir: Path) -> int:
    """The child of :func:`create`: one JVM, started to write ``temporary`` at its exit, runs
    the three jobs on a small synthetic crawl, then exits and waits for the JVM to finish."""
    import tempfile

    from pyspark.sql import SparkSession

    prepare_driver()
    plan = launch_plan(temporary, conf_dir, dump=True)
    if isinstance(plan, str):
        print(plan, file=sys.stderr)
        return 2
    apply(plan)
    spark = (
        SparkSession.builder.appName("contentx-jvm-archive")
        .config(DRIVER_JAVA_OPTIONS_KEY, f"{DUMP_JAVA_OPTIONS} {plan.options}")
        .getOrCreate()
    )
    proc = spark.sparkContext._gateway.proc
    with tempfile.TemporaryDirectory(prefix="contentx-jvm-archive-") as work:
        _run_jobs(Path(work))
    spark.stop()
    spark.sparkContext._gateway.shutdown()
    proc.stdin.close()  # the JVM exits on its closed stdin and writes the archive on the way out
    return proc.wait(timeout=900)


_WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their has would when if so what can "
    "river valley harbour market winter council library garden railway museum village season "
    "history report visitors weather morning evening students teacher families building bridge "
    "opened described followed remained returned reached covered carried improved expected"
).split()


def write_sample_crawl(path: Path, pages: int = 48) -> Path:
    """A small WARC of article pages on four hosts (seeded, so every archive run reads the same):
    paragraphs of English words, a footer line each host repeats, exact and near copies, so that
    every stage of the jobs (extraction, filters, line dedup, MinHash) loads its classes."""
    import io
    import random

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    rng = random.Random(20261127)
    previous: list[str] = []
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for i in range(pages):
            host = f"site{i % 4}.example"
            paragraphs = [
                " ".join(rng.choice(_WORDS) for _ in range(rng.randint(40, 90))).capitalize() + "."
                for _ in range(rng.randint(4, 9))
            ]
            if i % 6 == 5 and previous:  # a near copy of the page before
                paragraphs = paragraphs[:1] + previous[1:]
            previous = paragraphs
            body = "".join(f"<p>{p}</p>" for p in paragraphs)
            html = (
                f"<html><head><title>Page {i}</title></head><body><nav><a href='/'>Home</a></nav>"
                f"<article><h1>Page {i} of {host}</h1>{body}</article>"
                f"<footer><p>Subscribe to the {host} newsletter for the weekly report.</p></footer>"
                "</body></html>"
            ).encode()
            headers = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
            )
            record = writer.create_warc_record(
                f"https://{host}/article/{i}", "response", payload=io.BytesIO(html), http_headers=headers
            )
            writer.write_record(record)
    return path


def _run_jobs(work: Path) -> None:
    warc = write_sample_crawl(work / "crawl.warc.gz")
    steps = [
        ("run", ["--input", str(warc), "--output", str(work / "table"), "--show-rows", "0"]),
        (
            "corpus",
            [
                "--input",
                str(work / "table"),
                "--output",
                str(work / "corpus"),
                "--signals",
                "--filters",
                "fineweb",
                "--dedup",
                "near",
                "--line-dedup",
            ],
        ),
        (
            "select",
            [
                "--from",
                str(work / "corpus"),
                "--output",
                str(work / "select"),
                "--filter-set",
                "gopher_quality.min_words=60",
            ],
        ),
    ]
    for name, argv in steps:
        code = main_of(name)(argv)
        if code != 0:
            raise SystemExit(f"contentx {name} exited {code}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump"] and len(sys.argv) == 4:
        sys.exit(_dump(Path(sys.argv[2]), Path(sys.argv[3])))
    print("usage: contentx jvm-archive", file=sys.stderr)
    sys.exit(2)
