"""Errors of the command lines (``contentx`` and the job's)."""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence


class UserError(Exception):
    """A mistake in the invocation or its inputs: reported as one sentence on stderr, exit code 2."""


#: What the kernel (ENOSPC, EDQUOT), Python, pyarrow, Hadoop and the JVM say when a filesystem is full.
_DISK_FULL = re.compile(r"No space left on device|Disk quota exceeded|\bENOSPC\b|errno 28\b", re.IGNORECASE)
#: The path a Python ``OSError`` names (``[Errno 28] No space left on device: '/x/y'``), or a JVM
#: ``FileNotFoundException``/``IOException`` line naming one (``/x/y (No space left on device)``).
_FULL_PATH = (
    re.compile(r"(?:No space left on device|Disk quota exceeded): '([^']+)'"),
    re.compile(r"(/[^\s'\"()]+) \((?:No space left on device|Disk quota exceeded)\)"),
)

#: Where Spark writes its own files (shuffle, spill, cached blocks): its local directories.
_LOCAL_DIR_WRITE = re.compile(
    r"org\.apache\.spark\.(?:storage|shuffle)\.|UnsafeExternalSorter|UnsafeSorterSpill"
)


def spark_local_dirs() -> str:
    """Spark's local directories as this driver sees them: ``SPARK_LOCAL_DIRS``, else the running
    context's ``spark.local.dir``, else the temporary directory (Spark's default); on a cluster
    the executors' are their workers' (said so)."""
    dirs = os.environ.get("SPARK_LOCAL_DIRS")
    local = True
    try:
        from pyspark import SparkContext

        sc = SparkContext._active_spark_context
        if sc is not None:
            local = str(sc.master).startswith("local")
            dirs = dirs or sc.getConf().get("spark.local.dir")
    except Exception:
        pass
    if not local:
        return "the executors' Spark local directory (spark.local.dir / SPARK_LOCAL_DIRS of the workers)"
    return f"Spark's local directory {dirs or tempfile.gettempdir()}"


def disk_full_line(exc: BaseException, where: str | None = None) -> str | None:
    """One line for an exception that comes from a full filesystem (on the driver or, through
    Spark, in a worker or the JVM), naming the full path when the error names one, else ``where``;
    None for any other exception."""
    text = "".join(traceback.format_exception(exc))
    if not _DISK_FULL.search(text):
        return None
    path = next((m.group(1) for pattern in _FULL_PATH for m in [pattern.search(text)] if m), None)
    if path is None:  # the JVM names no file: Spark's own shuffle/spill files, or the output
        path = spark_local_dirs() if _LOCAL_DIR_WRITE.search(text) else where
    at = f" writing {path}" if path else ""
    return f"no space left on device{at}: free space there (or set spark.local.dir elsewhere) and rerun"


def job_main(
    prog: str,
    argv: Sequence[str] | None,
    parser: argparse.ArgumentParser,
    body: Callable[[argparse.Namespace], int],
    interrupted: str = "interrupted",
    rerun: str = "",
) -> int:
    """A job's ``main``: parse ``argv``, run ``body``; a :class:`UserError` or a full filesystem
    is one line on stderr and exit code 2 (``rerun``: how to finish afterwards, e.g. "with
    --resume"), Ctrl-C one line and 130 (never a stack trace)."""
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return body(args)
    except UserError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return 130
    except Exception as exc:
        line = disk_full_line(exc, getattr(args, "output", None))
        if line is None:
            raise
        print(f"{prog}: error: {line}{' ' + rerun if rerun else ''}", file=sys.stderr)
        return 2
