"""The one exception type for bad leaderboard or results input: shown to users as one line."""

from __future__ import annotations


class LeaderboardError(Exception):
    """A leaderboard or results directory cannot be read, validated or written.

    The message names the file and the field or value at fault and is meant to be shown as it
    is (`spade-eval` prints it on one line and exits 2).
    """
