"""Errors of the command lines (``contentx`` and the job's)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence


class UserError(Exception):
    """A mistake in the invocation or its inputs: reported as one sentence on stderr, exit code 2."""


def job_main(
    prog: str,
    argv: Sequence[str] | None,
    parser: argparse.ArgumentParser,
    body: Callable[[argparse.Namespace], int],
    interrupted: str = "interrupted",
) -> int:
    """A job's ``main``: parse ``argv``, run ``body``; a :class:`UserError` is one line on stderr
    and exit code 2, Ctrl-C one line and 130 (never a stack trace)."""
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
