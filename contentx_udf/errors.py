"""Errors of the command lines (``contentx`` and the job's)."""


class UserError(Exception):
    """A mistake in the invocation or its inputs: reported as one sentence on stderr, exit code 2."""
