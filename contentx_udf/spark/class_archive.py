"""The driver JVM's class archive (AppCDS): Spark's classes mapped from one file at start-up
instead of being read, parsed and verified from ~250 jars at every run.

Java's class-data sharing (JEP 310, AppCDS; JEP 350, dynamic archives, JDK 13+): a run started
with ``-XX:ArchiveClassesAtExit=FILE`` writes the classes it loaded into ``FILE`` when its JVM
exits, and a JVM started with ``-XX:SharedArchiveFile=FILE`` maps them instead of loading them.
JDK 19+ can do this by itself (``-XX:+AutoCreateSharedArchive``); Java 17, which Spark 4 runs
on, cannot, so ``contentx jvm-archive`` (and ``./dev.sh`` after an install) writes the archive
once with a small run of every job in one JVM (:func:`create`), and :func:`launch_plan` gives
it to each driver JVM a job launches (``worker_env.spark_session``).

Measured on the 2-core machine (docs/performance.md, "The driver JVM's class archive"): the
JVM and SparkSession start 7 s -> 3.3 s, a 100,000-document ``contentx select`` 25.4 s -> 18.0 s.

Two rules of the JVM shape what is done here:

* **No non-empty directory on the class path.** Spark puts ``SPARK_CONF_DIR`` on the driver's
  class path, and the JVM refuses to write an archive over a class path with a non-empty
  directory (and will not use one written without it).  So the JVM is launched with
  ``SPARK_CONF_DIR`` set to an empty directory, the Spark settings of the real one given as
  ``--properties-file`` and its log4j2 file as ``-Dlog4j2.configurationFile``.  That is only
  done when those two files are all the directory holds for Spark (``*.toml`` are contentx's
  own); a directory with e.g. ``core-site.xml`` or ``spark-env.sh`` runs without an archive.
* **An archive matches one JVM build and one class path.**  Its file name carries a
  fingerprint of both (:func:`fingerprint`), so a new pyspark or Java gets a new archive instead
  of a rejected one; a rejected or damaged file is ignored by the JVM (``-Xshare:auto``, its
  messages turned off) and the job runs as without it.

``CONTENTX_JVM_ARCHIVE=off`` turns it off; ``CONTENTX_JVM_ARCHIVE=DIR`` keeps archives in
``DIR`` instead of ``$XDG_CACHE_HOME/contentx/jvm`` (``~/.cache/contentx/jvm``).  Under
``spark-submit`` the JVM is already running: give ``--driver-java-options
-XX:SharedArchiveFile=FILE`` there if wanted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

#: The environment variable that turns the archive off (``off``) or names its directory.
ARCHIVE_ENV = "CONTENTX_JVM_ARCHIVE"
#: Its values that turn the archive off.
OFF_VALUES = frozenset({"off", "0", "false", "no"})
#: Files of a Spark configuration directory that are given to the JVM another way
#: (``--properties-file``, ``-Dlog4j2.configurationFile``); any other file but contentx's own
#: ``*.toml`` keeps the directory on the class path and the archive off.
MOVABLE_CONF_FILES = frozenset({"spark-defaults.conf", "log4j2.properties"})
#: The JVM's own messages about the archive (a rejected archive, classes it skips when writing
#: one: "Skipping ...: Signed JAR") are not the user's business.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"

_status: str = "not started here"


@dataclass(frozen=True)
class LaunchPlan:
    """What the driver JVM is launched with: JVM ``options`` to add and ``environ`` to set."""

    options: str
    environ: dict[str, str] = field(default_factory=dict)
    archive: Path | None = None


def archive_dir(environ: dict[str, str] | os._Environ | None = None) -> Path | None:
    """Where archives are kept, or None when ``CONTENTX_JVM_ARCHIVE`` turns them off."""
    env = os.environ if environ is None else environ
    value = env.get(ARCHIVE_ENV, "").strip()
    if value.lower() in OFF_VALUES:
        return None
    if value:
        return Path(value).expanduser()
    cache = env.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(cache) / "contentx" / "jvm"


def spark_home(environ: dict[str, str] | os._Environ | None = None) -> Path:
    """The Spark installation whose jars the driver JVM loads (pyspark's own rule)."""
    env = os.environ if environ is None else environ
    if env.get("SPARK_HOME"):
        return Path(env["SPARK_HOME"])
    import importlib.util

    spec = importlib.util.find_spec("pyspark")  # (found, not imported: pyspark's import is slow)
    if spec is not None and spec.origin and (Path(spec.origin).parent / "jars").is_dir():
        return Path(spec.origin).parent
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def fingerprint(home: Path, java_version: str) -> str:
    """16 hex digits naming the JVM build (``java -version``'s text) and the jars of ``home``
    (names, sizes, modification times): what an archive is valid for."""
    digest = hashlib.sha256(java_version.encode())
    jars = sorted((home / "jars").glob("*.jar"))
    for jar in jars:
        stat = jar.stat()
        digest.update(f"\0{jar.name}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    digest.update(str(home.resolve()).encode())
    return digest.hexdigest()[:16]


def archive_path(directory: Path, home: Path, java_version: str) -> Path:
    return directory / f"spark-{fingerprint(home, java_version)}.jsa"


def _conf_files(conf_dir: Path) -> tuple[list[str], str | None]:
    """The files of ``conf_dir`` Spark reads, or ``([], why)`` when the directory must stay on
    the class path."""
    try:
        names = sorted(p.name for p in conf_dir.iterdir())
    except OSError:
        return [], None  # no directory: nothing to move
    spark_files = [n for n in names if not n.endswith(".toml")]
    other = [n for n in spark_files if n not in MOVABLE_CONF_FILES]
    if other:
        return [], f"{conf_dir} holds {other[0]}, which Spark reads from the class path"
    return spark_files, None


def launch_plan(
    archive: Path | None,
    conf_dir: Path,
    environ: dict[str, str] | os._Environ | None = None,
    dump: bool = False,
) -> LaunchPlan | str:
    """How to launch a driver JVM that maps ``archive`` (``dump``: that writes it at exit), or
    why not (a string).  ``conf_dir``: the Spark configuration directory the JVM would read."""
    env = os.environ if environ is None else environ
    if archive is None:
        return f"off ({ARCHIVE_ENV}=off)"
    if "PYSPARK_GATEWAY_PORT" in env:
        return "off (spark-submit started the JVM)"
    if not dump and not archive.is_file():
        return "none yet (`contentx jvm-archive` writes it)"
    submit = env.get("PYSPARK_SUBMIT_ARGS", "").strip() or "pyspark-shell"
    if "--properties-file" in submit:
        return "off (PYSPARK_SUBMIT_ARGS gives its own --properties-file)"
    files, why = _conf_files(conf_dir)
    if why:
        return f"off ({why})"
    empty = archive.parent / "empty-conf"
    options = [f"-XX:ArchiveClassesAtExit={archive}" if dump else f"-XX:SharedArchiveFile={archive}", QUIET]
    if "log4j2.properties" in files:
        options.append(f"-Dlog4j2.configurationFile={conf_dir / 'log4j2.properties'}")
    if "spark-defaults.conf" in files:
        submit = f"--properties-file {shlex.quote(str(conf_dir / 'spark-defaults.conf'))} {submit}"
    return LaunchPlan(
        " ".join(options), {"SPARK_CONF_DIR": str(empty), "PYSPARK_SUBMIT_ARGS": submit}, archive
    )


def apply(plan: LaunchPlan) -> None:
    """Set ``plan``'s environment for the JVM about to be launched (its empty configuration
    directory made)."""
    Path(plan.environ["SPARK_CONF_DIR"]).mkdir(parents=True, exist_ok=True)
    os.environ.update(plan.environ)


def set_status(status: str) -> None:
    global _status
    _status = status


def status() -> str:
    """Whether this process's driver JVM maps an archive: ``used (PATH)``, or why not."""
    return _status


def existing() -> Path | None:
    """The archive for this Java and Spark when it has been written, else None."""
    from .worker_env import java_version_text

    directory = archive_dir()
    if directory is None:
        return None
    path = archive_path(directory, spark_home(), java_version_text())
    return path if path.is_file() else None


def create(directory: Path | None = None, java_version: str | None = None, out=sys.stderr) -> Path:
    """Write the archive for this Java and Spark (a small run of the extraction job, a corpus
    build with ``--signals`` and a ``select`` in one JVM started with ``-XX:ArchiveClassesAtExit``),
    under a temporary name renamed when the JVM has written it; older archives in the
    directory are removed.  Returns its path; raises :class:`~contentx_udf.errors.UserError`."""
    from ..errors import UserError
    from .worker_env import CONF_DIR, java_version_text

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
        [sys.executable, "-m", "contentx_udf.spark.class_archive", "--dump", str(temporary), str(conf_dir)],
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

    from .worker_env import DRIVER_JAVA_OPTIONS_KEY, prepare_driver

    prepare_driver()
    plan = launch_plan(temporary, conf_dir, dump=True)
    if isinstance(plan, str):
        print(plan, file=sys.stderr)
        return 2
    apply(plan)
    spark = (
        SparkSession.builder.appName("contentx-jvm-archive")
        .config(DRIVER_JAVA_OPTIONS_KEY, plan.options)
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
    from ..corpus import job as corpus_job
    from ..corpus import select
    from . import job as extract_job

    warc = write_sample_crawl(work / "crawl.warc.gz")
    steps = [
        (extract_job.main, ["--input", str(warc), "--output", str(work / "table"), "--show-rows", "0"]),
        (
            corpus_job.main,
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
            select.main,
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
    for main, argv in steps:
        code = main(argv)
        if code != 0:
            raise SystemExit(f"{main.__module__} exited {code}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--dump"] and len(sys.argv) == 4:
        sys.exit(_dump(Path(sys.argv[2]), Path(sys.argv[3])))
    print("usage: contentx jvm-archive", file=sys.stderr)
    sys.exit(2)
