"""The one error the viewer raises for bad input: a message naming the file and what is wrong."""

from __future__ import annotations


class ViewError(ValueError):
    """A directory or file the viewer cannot read; the message is one line for the user."""
