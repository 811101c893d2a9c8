"""The extraction job's driver JVM options (conf/extract.toml ``[job] driver_java_options``):
given to the JVM when the job launches it, never over the user's own."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from contentx_udf.runtime.class_archive import ARCHIVE_ENV
from contentx_udf.runtime.session import DRIVER_JAVA_OPTIONS_KEY, launched_java_options
from contentx_udf.spark.config import DEFAULT_DRIVER_JAVA_OPTIONS, JobConfig, configured_java_options
from contentx_udf.spark.job import driver_java_options

from .cluster import JOB, REPO, loopback_env
from .test_job import SAMPLE


def test_options_are_given_when_this_process_launches_the_jvm(tmp_path):
    assert launched_java_options(" -XX:TieredStopAtLevel=1 ", {}, tmp_path) == "-XX:TieredStopAtLevel=1"
    assert launched_java_options("", {}, tmp_path) is None


def test_spark_submit_or_the_users_own_setting_wins(tmp_path):
    options = "-XX:TieredStopAtLevel=1"
    # spark-submit started the JVM: its options were given there
    assert launched_java_options(options, {"PYSPARK_GATEWAY_PORT": "4040"}, tmp_path) is None
    submit = {"PYSPARK_SUBMIT_ARGS": f"--conf {DRIVER_JAVA_OPTIONS_KEY}=-Xss4m pyspark-shell"}
    assert launched_java_options(options, submit, tmp_path) is None
    (tmp_path / "spark-defaults.conf").write_text(
        f"# {DRIVER_JAVA_OPTIONS_KEY} in a comment does not count\nspark.master local[2]\n"
    )
    assert launched_java_options(options, {}, tmp_path) == options
    defaults = f"spark.master local[2]\n{DRIVER_JAVA_OPTIONS_KEY}  -Xss4m\n"
    (tmp_path / "spark-defaults.conf").write_text(defaults)
    assert launched_java_options(options, {}, tmp_path) is None


def test_config_file_value(tmp_path):
    assert configured_java_options() == DEFAULT_DRIVER_JAVA_OPTIONS  # the repository's conf/extract.toml
    path = tmp_path / "extract.toml"
    path.write_text('[job]\ndriver_java_options = ""\n')
    assert configured_java_options(str(path)) == ""


def test_only_the_arrow_writer_gets_them():
    """With Spark's writer the JVM writes the table, and its compiled code's speed counts."""
    local = JobConfig(["in.warc.gz"], "out")
    assert driver_java_options(local) == DEFAULT_DRIVER_JAVA_OPTIONS
    assert driver_java_options(JobConfig(["in.warc.gz"], "out", writer="spark")) == ""
    assert driver_java_options(JobConfig(["in.warc.gz"], "viewfs://cluster/out")) == ""


@pytest.mark.spark
def test_the_job_launches_its_driver_jvm_with_the_configured_options(tmp_path):
    """A run of ``jobs/extract_warc.py`` (its own JVM): the JVM reports the options, and the
    output is complete.  Its console is quiet (contentx_udf.runtime.console): no JVM or Spark
    warning, no stage bar, and contentx's own progress line (stderr is not a terminal here: plain
    lines, the last at the end).  The JVM class archive turned off (``CONTENTX_JVM_ARCHIVE=off``,
    as the summary says): the launch without it (tests/runtime/test_class_archive.py runs the job
    with an archive and with a damaged one)."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(JOB), "--input", str(SAMPLE), "--output", str(out), "--show-rows", "0"],
        env=loopback_env(**{ARCHIVE_ENV: "off"}),
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads((out / "_summary.json").read_text())
    assert summary["jvm_class_archive"].startswith("off")
    for flag in DEFAULT_DRIVER_JAVA_OPTIONS.split():
        assert flag in summary["driver_java_options"].split()
    assert sum(summary["rows_by_method_status"]["combined"].values()) == 16
    console = proc.stderr
    for noise in ("WARN", "Using incubator modules", "[Stage", "Setting default log level", "\r"):
        assert noise not in console, console[-3000:]
    lines = console.splitlines()
    assert lines and all(line.startswith("contentx run: files ") for line in lines), console[-3000:]
    assert re.fullmatch(r"contentx run: files 1/1 done, records 50 \([\d.,]+/s\), \d+ s", lines[-1])
    assert "\ncontentx run summary\n" in proc.stdout  # (the summary on stdout, apart from the progress)
