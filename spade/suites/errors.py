"""The one exception type for bad suite input: callers print it as a single line."""

from __future__ import annotations


class SuiteError(Exception):
    """A suite cannot be frozen, read, verified or published as asked.

    The message names the file, field or value at fault and is meant to be shown to the
    user as it is (the CLI prints it on one line and exits 1).
    """
