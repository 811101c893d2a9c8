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

Nothing else is imported here before the fork: PySpark's daemon must start no thread first.
"""

from __future__ import annotations

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


def main() -> None:
    sys.path[:] = installed_first(sys.path)
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
