"""The driver's process set-up, its JVM launch and its SparkSession (the master is never set here).

Knows no job: the jobs call :func:`spark_session` with their application name and JVM options."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

from ..errors import UserError
from ..paths import CONF_DIR
from . import class_archive, console
from .java import java_version_text


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

#: The Spark setting :func:`spark_session` gives ``driver_java_options`` as (Spark 3.0+: "default
#: JVM options to prepend to spark.driver.extraJavaOptions", so a user's extraJavaOptions still apply).
DRIVER_JAVA_OPTIONS_KEY = "spark.driver.defaultJavaOptions"


def launched_java_options(
    options: str, environ: dict[str, str] | None = None, conf_dir: Path | None = None
) -> str | None:
    """The JVM options :func:`spark_session` passes to the driver JVM it launches, or None.

    None when ``options`` is empty, when ``spark-submit`` already launched the JVM (its
    ``PYSPARK_GATEWAY_PORT`` is set: the JVM's options were given there), or when the user set
    :data:`DRIVER_JAVA_OPTIONS_KEY` themselves (in ``PYSPARK_SUBMIT_ARGS`` or in
    ``SPARK_CONF_DIR/spark-defaults.conf``): theirs win."""
    if not options.strip() or java_options_taken(environ, conf_dir):
        return None
    return options.strip()


def java_options_taken(environ: dict[str, str] | None = None, conf_dir: Path | None = None) -> bool:
    """True when the driver JVM's :data:`DRIVER_JAVA_OPTIONS_KEY` is not this process's to give:
    ``spark-submit`` launched the JVM, or the user set it (``PYSPARK_SUBMIT_ARGS``,
    ``spark-defaults.conf``)."""
    env = os.environ if environ is None else environ
    directory = conf_dir if conf_dir is not None else Path(env.get("SPARK_CONF_DIR") or CONF_DIR)
    return "PYSPARK_GATEWAY_PORT" in env or console.user_setting(DRIVER_JAVA_OPTIONS_KEY, env, directory)


def spark_session(app_name: str, driver_java_options: str = "", verbose: bool = False):
    """The driver's SparkSession (set up by :func:`prepare_driver`; the master is never set here,
    so ``spark-submit --master`` and ``conf/spark-defaults.conf`` decide it).

    ``driver_java_options``: JVM options for the driver JVM when this process launches it
    (:func:`launched_java_options` says when); ignored when a session or JVM already exists.
    A JVM launched here maps the class archive when there is one (:mod:`.class_archive`), and its
    console is quiet unless ``verbose`` (:mod:`.console`)."""
    prepare_driver()
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if SparkContext._active_spark_context is not None:
        return builder.getOrCreate()
    launching = "PYSPARK_GATEWAY_PORT" not in os.environ and SparkContext._gateway is None
    conf_dir = Path(os.environ.get("SPARK_CONF_DIR") or CONF_DIR)
    settings = {"spark.app.name": app_name}
    settings.update(console.quiet_settings(verbose, launching, os.environ, conf_dir))
    options = launched_java_options(driver_java_options) or ""
    plan = _archive_plan()
    mapped = isinstance(plan, class_archive.LaunchPlan)
    environ = {**(plan.environ if mapped else {}), **console.log_level_environ(verbose, os.environ)}
    saved = {key: os.environ.get(key) for key in environ}
    if mapped:
        options = f"{options} {plan.options}".strip()
        class_archive.apply(plan)
    os.environ.update(environ)
    if options:
        settings[DRIVER_JAVA_OPTIONS_KEY] = options
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        if launching:  # (the JVM's stderr through the console's filter)
            SparkContext._ensure_initialized(
                gateway=console.launch_gateway(SparkConf().setAll(settings.items()), verbose)
            )
        session = builder.getOrCreate()
    finally:
        for key, value in saved.items():  # (read by the launch only)
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    class_archive.set_status(f"given ({plan.archive})" if mapped else plan)
    return session


def _archive_plan() -> class_archive.LaunchPlan | str:
    """The class archive's launch plan for a driver JVM launched now, or why there is none."""
    if java_options_taken():
        return "off (the driver JVM's options are the user's or spark-submit's)"
    try:
        java = java_version_text()
    except UserError:
        return "off (no Java)"  # (the launch says so in its own words)
    directory = class_archive.archive_dir()
    archive = (
        None if directory is None else class_archive.archive_path(directory, class_archive.spark_home(), java)
    )
    return class_archive.launch_plan(archive, Path(os.environ.get("SPARK_CONF_DIR") or CONF_DIR))


@contextmanager
def arrow_batch_rows(spark, rows: int):
    """Arrow batches of ``rows`` rows for the Arrow UDFs run inside the block (the corpus job's texts
    of a few KB: a few MB a batch), the session's own setting (256, sized for HTML payloads)
    restored afterwards."""
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key, None)
    spark.conf.set(key, str(rows))
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
