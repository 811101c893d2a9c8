"""PySpark's daemon (``spark.python.daemon.module``, conf/spark-defaults.conf) with the installed
PySpark imported in place of its zip.

Spark starts every Python worker with ``$SPARK_HOME/python/lib/pyspark.zip`` (and py4j's zip)
first on ``PYTHONPATH``.  Python compiles a module imported from a zip every time (it writes no
bytecode cache there), so every daemon and worker compiled PySpark's modules again: 0.68 s of
CPU against 0.20 s from the installed package, and more for the worker's own imports.  When that
zip belongs to the PySpark installed in this interpreter (a pip install: ``SPARK_HOME`` is the
package's directory), the two are the same code, and the zips are dropped from ``sys.path``
before PySpark is imported.  A cluster's own ``SPARK_HOME`` is left alone.  The first Python job
of a local session: 2.2 → 1.0 s (docs/performance.md, "Python workers' start").

The daemon then imports, once, what every worker it forks imports first (:data:`PRELOADED`:
numpy, pyarrow, pandas, PySpark's worker and the extraction's worker module), and freezes them out of the
garbage collector (``gc.freeze``, as CPython's documentation advises before a fork).  Each forked
worker starts with them: about 0.5 CPU-s a worker before (the suite forks about a hundred).  The
imports start no thread (:func:`preload`): numpy's OpenBLAS and pyarrow's jemalloc would each start
one, so both are set single-threaded first, as the workers want them anyway (a worker is one task
on one core).  Importing this module itself imports nothing: the daemon must fork single-threaded.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Sequence
from importlib.machinery import PathFinder


def installed_first(path: Sequence[str]) -> list[str]:
    """``path`` without the zips of ``<pyspark>/python/lib`` when ``<pyspark>`` is the PySpark
    package found on ``path``'s other entries (py4j's zip only when py4j is installed too)."""
    plain = [p for p in path if not p.endswith(".zip")]
    spec = PathFinder.find_spec("pyspark", plain)
    if spec is None or not spec.origin:
        return list(path)
    lib = os.path.realpath(os.path.join(os.path.dirname(spec.origin), "python", "lib"))
    has_py4j = PathFinder.find_spec("py4j", plain) is not None

    def dropped(entry: str) -> bool:
        if not entry.endswith(".zip") or os.path.realpath(os.path.dirname(entry)) != lib:
            return False
        name = os.path.basename(entry)
        return name == "pyspark.zip" or (name.startswith("py4j-") and has_py4j)

    return [p for p in path if not dropped(p)]


#: Imported by the daemon before it forks (in this order); one that fails to import is left to
#: the worker that needs it.  Libraries only, and this package's own worker module: the daemon
#: serves every job's workers and names no job above this layer (a job's own modules, about
#: 0.1 CPU-s a worker, are imported by its workers).
PRELOADED = ("numpy", "pyarrow", "pandas", "pyspark.worker", "contentx_udf.spark.worker")
#: Set (unless set already) before :data:`PRELOADED` is imported, so that no import starts a thread:
#: OpenBLAS starts its pool when loaded, pyarrow's bundled jemalloc its purging thread.
SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}


def preload(modules: Sequence[str] = PRELOADED) -> list[str]:
    """Import ``modules`` in this process (the daemon, before it forks; see the module's text);
    returns those imported."""
    for name, value in SINGLE_THREADED.items():
        os.environ.setdefault(name, value)
    loaded = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a worker that needs it says why
            continue
        loaded.append(name)
    gc.collect()
    gc.freeze()
    return loaded


def main() -> None:
    sys.path[:] = installed_first(sys.path)
    preload()
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
