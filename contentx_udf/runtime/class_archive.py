"""The driver JVM's class archive (AppCDS): Spark's classes mapped from one file at start-up
instead of being read, parsed and verified from ~250 jars at every run.

Java's class-data sharing (JEP 310, AppCDS; JEP 350, dynamic archives, JDK 13+): a run started
with ``-XX:ArchiveClassesAtExit=FILE`` writes the classes it loaded into ``FILE`` when its JVM
exits, and a JVM started with ``-XX:SharedArchiveFile=FILE`` maps them instead of loading them.
JDK 19+ can do this by itself (``-XX:+AutoCreateSharedArchive``); Java 17, which Spark 4 runs
on, cannot, so ``contentx jvm-archive`` (and ``./dev.sh`` after an install) writes the archive
once with a small run of every job in one JVM (:func:`contentx_udf.jvm_archive.create`, above the
jobs), and :func:`launch_plan` gives it to each driver JVM a job launches
(:func:`.session.spark_session`).  This module plans; it knows no job.

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
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .java import java_version_text

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
    directory = archive_dir()
    if directory is None:
        return None
    path = archive_path(directory, spark_home(), java_version_text())
    return path if path.is_file() else None
