"""The driver JVM's class archive (contentx_udf.runtime.class_archive; written by
contentx_udf.jvm_archive): when a launched JVM maps it, how the launch is changed for it, and a real
archive written and mapped by a job."""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from contentx_udf import jvm_archive
from contentx_udf.runtime import class_archive as ca
from contentx_udf.runtime.java import java_version_text

from ..spark.cluster import JOB, REPO, loopback_env
from ..spark.test_job import SAMPLE


def _conf(tmp_path: Path, *names: str) -> Path:
    conf = tmp_path / "conf"
    conf.mkdir()
    for name in names:
        (conf / name).write_text("# test\n")
    return conf


def test_archive_dir_default_override_and_off(tmp_path):
    assert ca.archive_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "contentx" / "jvm"
    assert ca.archive_dir({ca.ARCHIVE_ENV: str(tmp_path / "a")}) == tmp_path / "a"
    for off in ("off", "OFF", "0", "false"):
        assert ca.archive_dir({ca.ARCHIVE_ENV: off}) is None


def test_an_existing_archive_is_given_with_the_conf_directory_moved_off_the_class_path(tmp_path):
    conf = _conf(tmp_path, "spark-defaults.conf", "log4j2.properties", "corpus.toml")
    archive = tmp_path / "jvm" / "spark-0123.jsa"
    archive.parent.mkdir()
    assert ca.launch_plan(archive, conf, {}).startswith("none yet")
    archive.write_bytes(b"x")
    plan = ca.launch_plan(archive, conf, {})
    assert isinstance(plan, ca.LaunchPlan)
    options = plan.options.split()
    assert f"-XX:SharedArchiveFile={archive}" in options
    assert f"-Dlog4j2.configurationFile={conf / 'log4j2.properties'}" in options
    assert plan.environ["SPARK_CONF_DIR"] == str(archive.parent / "empty-conf")
    assert shlex.split(plan.environ["PYSPARK_SUBMIT_ARGS"]) == [
        "--properties-file",
        str(conf / "spark-defaults.conf"),
        "pyspark-shell",
    ]
    # the user's own submit arguments are kept after the properties file
    mine = ca.launch_plan(archive, conf, {"PYSPARK_SUBMIT_ARGS": "--master local[1] pyspark-shell"})
    assert shlex.split(mine.environ["PYSPARK_SUBMIT_ARGS"])[2:] == ["--master", "local[1]", "pyspark-shell"]
    dump = ca.launch_plan(archive, conf, {}, dump=True)
    assert f"-XX:ArchiveClassesAtExit={archive}" in dump.options.split()


def test_no_archive_where_it_cannot_apply(tmp_path):
    archive = tmp_path / "spark-0123.jsa"
    archive.write_bytes(b"x")
    conf = _conf(tmp_path, "spark-defaults.conf")
    assert ca.launch_plan(None, conf, {}).startswith("off")
    assert "spark-submit" in ca.launch_plan(archive, conf, {"PYSPARK_GATEWAY_PORT": "1"})
    own = {"PYSPARK_SUBMIT_ARGS": "--properties-file my.conf pyspark-shell"}
    assert "--properties-file" in ca.launch_plan(archive, conf, own)
    (conf / "core-site.xml").write_text("<configuration/>")
    assert "core-site.xml" in ca.launch_plan(archive, conf, {})


def test_fingerprint_follows_the_jars_and_the_java(tmp_path):
    home = tmp_path / "spark"
    (home / "jars").mkdir(parents=True)
    (home / "jars" / "a.jar").write_bytes(b"1")
    first = ca.fingerprint(home, "openjdk 17.0.15")
    assert ca.fingerprint(home, "openjdk 17.0.15") == first
    assert ca.fingerprint(home, "openjdk 21.0.2") != first
    (home / "jars" / "a.jar").write_bytes(b"22")
    assert ca.fingerprint(home, "openjdk 17.0.15") != first


def test_stale_archives_are_removed_others_kept(tmp_path):
    home, other = tmp_path / "home", tmp_path / "other"
    home.mkdir()
    other.mkdir()
    kept = tmp_path / "spark-new.jsa"
    for name, owner in (("new", home), ("old", home), ("venv2", other), ("gone", tmp_path / "gone")):
        (tmp_path / f"spark-{name}.jsa").write_bytes(b"x")
        (tmp_path / f"spark-{name}.json").write_text(json.dumps({"spark_home": str(owner)}))
    old_temporary = tmp_path / "spark-new.123.tmp"
    old_temporary.write_bytes(b"x")
    os.utime(old_temporary, (0, 0))
    jvm_archive._remove_stale(tmp_path, kept, str(home))
    assert sorted(p.name for p in tmp_path.glob("spark-*.jsa")) == ["spark-new.jsa", "spark-venv2.jsa"]
    assert not old_temporary.exists()


def _extract(out: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(JOB), "--input", str(SAMPLE), "--output", str(out), "--show-rows", "0", *extra],
        env=env,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )


def _archive_of_this_install(directory: Path, env: dict[str, str]) -> Path:
    """The archive ``contentx jvm-archive`` writes for this Java and Spark: the cache's when it
    has been written there (``./dev.sh`` runs the command after an install, before the suite:
    writing a second one here cost the suite about 45 s of its 2 cores), else one written into
    ``directory`` by the command.  (Used where it is: the archive records the class path, and a
    JVM maps it only where it was written.)  ``./dev.sh test`` writes it while the suite runs,
    holding ``CONTENTX_JVM_ARCHIVE_LOCK`` until it is done: waited for here."""
    if lock := os.environ.get("CONTENTX_JVM_ARCHIVE_LOCK"):
        with open(lock, "a") as held:  # (blocks until the writer has exited)
            fcntl.flock(held, fcntl.LOCK_SH)
    cached = ca.existing()
    if cached is not None:
        sidecar = json.loads(cached.with_suffix(".json").read_text())
        assert sidecar["spark_home"] == str(ca.spark_home().resolve())  # (its metadata: this install's)
        # the command finds it and leaves it as it is
        again = subprocess.run(
            [sys.executable, "-m", "contentx_udf", "jvm-archive", "--if-missing"],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )
        assert again.returncode == 0 and "wrote" not in again.stderr, again.stderr[-2000:]
        return cached
    made = subprocess.run(
        [sys.executable, "-m", "contentx_udf", "jvm-archive"],
        env={**env, ca.ARCHIVE_ENV: str(directory)},
        # (its JVM on the JIT's quick tier and the serial collector: jvm_archive.DUMP_JAVA_OPTIONS)
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=1200,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    assert "wrote" in made.stderr
    (written,) = directory.glob("spark-*.jsa")
    return written


@pytest.mark.spark
def test_a_written_archive_is_mapped_by_the_job_and_a_damaged_one_ignored(tmp_path):
    """``contentx jvm-archive`` writes the archive (:func:`_archive_of_this_install`: the cache's
    when there is one); the extraction job's JVM then loads Spark's
    classes from it (the JVM's class-load log says "shared objects file (top)", the dynamic
    archive), its console as quiet as without it; a damaged file in its place (under the same
    name in another archive directory) is ignored without
    a word, even with ``--verbose`` (Spark's console back, unfiltered), and that run, whose JVM
    maps nothing, writes the same rows.  (Two jobs after the archive's: the run with the archive
    turned off, ``CONTENTX_JVM_ARCHIVE=off``, is tests/spark/test_driver_jvm.py's.)"""
    archive = _archive_of_this_install(tmp_path / "jvm", loopback_env())
    assert archive.stat().st_size > 10_000_000
    assert archive == ca.archive_path(
        archive.parent, ca.spark_home(), java_version_text()
    )  # (this Java and Spark's)
    env = {**loopback_env(), ca.ARCHIVE_ENV: str(archive.parent)}

    log = tmp_path / "classes.log"
    trace = f"--conf spark.driver.extraJavaOptions=-Xlog:class+load:file={log} pyspark-shell"
    traced = {**env, "PYSPARK_SUBMIT_ARGS": trace}
    proc = _extract(tmp_path / "out", traced)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for noise in ("WARN", "Using incubator modules", "[Stage", "cds", "shared archive"):
        assert noise not in proc.stderr, proc.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "_summary.json").read_text())
    assert summary["jvm_class_archive"] == f"given ({archive})"
    spark_classes = [line for line in log.read_text().splitlines() if " org.apache.spark." in line]
    shared = [line for line in spark_classes if line.endswith("source: shared objects file (top)")]
    from_jars = [line for line in spark_classes if " source: file:" in line or " source: jar:" in line]
    assert len(shared) > 1000 and len(from_jars) < 0.05 * len(shared)  # (lambdas are made anew)

    damaged_archive = tmp_path / "damaged-jvm" / archive.name
    damaged_archive.parent.mkdir()
    damaged_archive.write_bytes(b"not an archive" * 1000)
    log.unlink()
    damaged = _extract(
        tmp_path / "damaged", {**traced, ca.ARCHIVE_ENV: str(damaged_archive.parent)}, "--verbose"
    )
    assert damaged.returncode == 0, damaged.stderr[-2000:]
    # (--verbose gives Spark's console back: the JVM's own notice, unfiltered)
    assert "WARNING: Using incubator modules" in damaged.stderr and "[Stage 0:" in damaged.stderr
    assert "cds" not in damaged.stderr.lower() and "shared archive" not in damaged.stderr.lower()
    again = json.loads((tmp_path / "damaged" / "_summary.json").read_text())
    assert again["jvm_class_archive"] == f"given ({damaged_archive})"  # (given; the JVM maps nothing)
    loaded = [line for line in log.read_text().splitlines() if " org.apache.spark." in line]
    assert len(loaded) > 1000 and not [line for line in loaded if "shared objects file" in line]
    assert again["rows_by_method_status"] == summary["rows_by_method_status"]
