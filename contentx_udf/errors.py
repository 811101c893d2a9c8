"""Errors of the command lines (``contentx`` and the job's)."""

from __future__ import annotations

import argparse
import re
import sys
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


def disk_full_line(exc: BaseException, where: str | None = None) -> str | None:
    """One line for an exception that comes from a full filesystem (on the driver or, through
    Spark, in a worker or the JVM), naming the full path when the error names one, else ``where``;
    None for any other exception."""
    text = "".join(traceback.format_exception(exc))
    if not _DISK_FULL.search(text):
        return None
    path = next((m.group(1) for pattern in _FULL_PATH for m in [pattern.search(text)] if m), where)
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
