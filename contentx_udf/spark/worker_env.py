"""Process set-up for the driver and the Python workers of the Spark job."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import UserError

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"

JAVA_HINT = (
    "Java 17 (or 21) is required to run Spark and was not found: install it "
    "(Debian/Ubuntu: `apt-get install openjdk-17-jre-headless`, macOS: `brew install openjdk@17`) "
    "or set JAVA_HOME to an installed JDK/JRE"
)


def check_java() -> None:
    """Fail with one clear sentence when no Java runtime can start Spark."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise UserError(JAVA_HINT)
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        raise UserError(JAVA_HINT) from None
    if out.returncode != 0:
        raise UserError(JAVA_HINT)


def prepare_driver() -> None:
    """Environment for a local run: workers use this interpreter; Spark reads conf/.

    ``PYSPARK_PYTHON`` is set to the running interpreter when unset, so the workers find
    the installed package.  ``SPARK_CONF_DIR`` points at the repository's ``conf/`` when
    unset, so ``conf/spark-defaults.conf`` applies to local runs; ``spark-submit --master``
    and ``--conf`` still override it (the master is never set in code).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if "SPARK_CONF_DIR" not in os.environ and (CONF_DIR / "spark-defaults.conf").exists():
        os.environ["SPARK_CONF_DIR"] = str(CONF_DIR)


#: Driver JVM options of a short local job (a small ``contentx select``), whose time is mostly
#: fixed cost: the JIT compiles with its quick tier (C1) only, no C2.  Measured on the 2-core
#: machine, ``select`` of 100,000 documents: the JVM's compiler threads took 21 of its 48 CPU
#: seconds with both tiers, and C1 alone cut the job's CPU by about 40 %; at 1,000,000 documents
#: C1 alone made it slower (docs/curation.md, "Run 10").
SHORT_JOB_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"


def _driver_java_options_set() -> bool:
    """Whether the user set ``spark.driver.extraJavaOptions`` (``PYSPARK_SUBMIT_ARGS`` or
    ``SPARK_CONF_DIR``'s ``spark-defaults.conf``): theirs is then left as it is."""
    key = "spark.driver.extraJavaOptions"
    if key in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        return True
    conf = Path(os.environ.get("SPARK_CONF_DIR", CONF_DIR)) / "spark-defaults.conf"
    try:
        lines = conf.read_text().splitlines()
    except OSError:
        return False
    return any(line.split(maxsplit=1)[:1] == [key] for line in lines)


def spark_session(app_name: str, short_job: bool = False):
    """The driver's SparkSession (set up by :func:`prepare_driver`; the master is never set here,
    so ``spark-submit --master`` and ``conf/spark-defaults.conf`` decide it).  ``short_job``: a
    driver JVM started here gets :data:`SHORT_JOB_JAVA_OPTIONS` unless the user set its options
    (under ``spark-submit`` the JVM is already running and this changes nothing)."""
    prepare_driver()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if short_job and not _driver_java_options_set():
        builder = builder.config("spark.driver.extraJavaOptions", SHORT_JOB_JAVA_OPTIONS)
    return builder.getOrCreate()


def prepare_worker(memory_mb: int = 0) -> None:
    """Per-task set-up in a Python worker (idempotent).

    ``memory_mb`` > 0 caps the worker's address space (``RLIMIT_AS``), so a pathological
    page fails its own row with ``MemoryError`` instead of taking the machine down.  This is
    what ``spark.executor.pyspark.memory`` does, without its messages on stderr.
    """
    # Lexbor and numpy are single-threaded here; keep BLAS from oversubscribing the cores.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if memory_mb > 0:
        try:
            import resource

            limit = memory_mb * 1024 * 1024
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if soft == resource.RLIM_INFINITY or soft > limit:
                new_hard = hard if hard != resource.RLIM_INFINITY and hard < limit else limit
                resource.setrlimit(resource.RLIMIT_AS, (min(limit, new_hard), new_hard))
        except (ImportError, ValueError, OSError):
            pass  # not supported on this platform: run unbounded
