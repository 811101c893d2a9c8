"""contentx_udf.spark.daemon: PySpark's daemon importing the installed PySpark, not its zip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from contentx_udf.spark.daemon import installed_first


def _package(root: Path, name: str) -> Path:
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("")
    return root / name


def test_the_installed_pysparks_zips_are_dropped(tmp_path):
    site = tmp_path / "site"
    lib = _package(site, "pyspark") / "python" / "lib"
    lib.mkdir(parents=True)
    _package(site, "py4j")
    zips = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip")]
    other = str(tmp_path / "job.zip")  # a user's zip elsewhere stays
    path = [*zips, other, "/usr/lib/python311.zip", str(site)]
    assert installed_first(path) == [other, "/usr/lib/python311.zip", str(site)]


def test_a_clusters_own_spark_home_is_kept(tmp_path):
    site = tmp_path / "site"
    _package(site, "pyspark")
    _package(site, "py4j")
    cluster = tmp_path / "opt" / "spark" / "python" / "lib"  # another SPARK_HOME's zips
    path = [str(cluster / "pyspark.zip"), str(cluster / "py4j-0.10.9.9-src.zip"), str(site)]
    assert installed_first(path) == path


def test_nothing_is_dropped_without_an_installed_copy(tmp_path):
    site = tmp_path / "site"
    lib = _package(site, "pyspark") / "python" / "lib"
    lib.mkdir(parents=True)
    zips = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip")]
    # no py4j installed: its zip stays, pyspark's goes
    assert installed_first([*zips, str(site)]) == [zips[1], str(site)]
    # no pyspark on the plain entries at all: the path as it was
    assert installed_first([*zips, str(tmp_path)]) == [*zips, str(tmp_path)]


def test_the_daemon_module_starts_no_thread_and_imports_no_numpy():
    """PySpark forks workers from the daemon: importing it (and the package above it) must not
    import numpy (its BLAS starts a thread) or anything else that does."""
    code = (
        "import os, sys; import contentx_udf.spark.daemon; "
        "print(len(os.listdir('/proc/self/task')), 'numpy' in sys.modules, 'pyarrow' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "False", "False"]


def test_the_daemon_preloads_the_workers_imports_without_starting_a_thread():
    """:func:`preload` (the daemon, before it forks): every preloaded module imported, still one
    thread (numpy's OpenBLAS and pyarrow's jemalloc would start theirs), the heap frozen."""
    code = (
        "import gc, os, sys; from contentx_udf.spark.daemon import PRELOADED, preload; "
        "loaded = preload(); "
        "print(len(os.listdir('/proc/self/task')), loaded == list(PRELOADED), "
        "all(m in sys.modules for m in PRELOADED), gc.get_freeze_count() > 10000)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "JE_ARROW_MALLOC_CONF")}
    env.pop("OMP_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["1", "True", "True", "True"]
    # without the settings, the same imports start threads: the check above can fail
    started = subprocess.run(
        [sys.executable, "-c", "import os, numpy, pyarrow; print(len(os.listdir('/proc/self/task')))"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert int(started.stdout) > 1


def test_the_package_names_still_import():
    import contentx_udf
    from contentx_udf import DEFAULT_METHOD, METHODS, extract

    assert DEFAULT_METHOD in METHODS
    assert extract is contentx_udf.extract
    assert "extract_all" in dir(contentx_udf)


def test_the_workers_import_the_installed_pyspark(spark):
    """The shared session reads conf/spark-defaults.conf: its workers run this daemon, so PySpark
    comes from the installed package (bytecode cached), not from pyspark.zip."""
    import pyspark

    where = spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("pyspark").__file__).collect()
    assert where == [pyspark.__file__]
    # ... and forks them after its preload: its settings are in their environment
    seen = spark.sparkContext.parallelize([0], 1).map(
        lambda _: __import__("os").environ.get("JE_ARROW_MALLOC_CONF")
    )
    assert seen.collect() == ["background_thread:false"]
    assert ".zip" not in where[0]
