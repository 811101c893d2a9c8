"""Errors of the job's command line."""


class UserError(Exception):
    """A mistake in the invocation: reported as one sentence on stderr, exit code 2."""
