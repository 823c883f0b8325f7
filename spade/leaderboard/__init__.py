"""Leaderboards: rows of results with provenance, deltas with CIs, renders, regression gate.

A leaderboard is a JSON file (format: `leaderboard.schema.json`) whose rows keep per-sample
scores, so paired statistics and the gate need no run directory. Saving regenerates
`<stem>.md` and `<stem>.png` beside it.
"""

from spade.atomic import write_atomic
from spade.leaderboard.board import Leaderboard, SavedFiles, leaderboard_errors
from spade.leaderboard.deltas import deltas_table, row_delta
from spade.leaderboard.errors import LeaderboardError
from spade.leaderboard.gate import (
    TOLERANCE_FLOOR,
    Z_ONE_SIDED_95,
    GateResult,
    compare,
    gate_failed,
    gate_report,
)
from spade.leaderboard.render import render_markdown, render_png
from spade.leaderboard.row import BenchmarkScore, Provenance, Row, as_row, row_from_run
from spade.leaderboard.run import RunResults, load_run

__all__ = [
    "TOLERANCE_FLOOR",
    "Z_ONE_SIDED_95",
    "BenchmarkScore",
    "GateResult",
    "Leaderboard",
    "LeaderboardError",
    "Provenance",
    "Row",
    "RunResults",
    "SavedFiles",
    "as_row",
    "compare",
    "deltas_table",
    "gate_failed",
    "gate_report",
    "leaderboard_errors",
    "load_run",
    "render_markdown",
    "render_png",
    "row_delta",
    "row_from_run",
    "write_atomic",
]
