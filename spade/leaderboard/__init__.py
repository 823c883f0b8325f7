"""Leaderboards: rows of results with provenance, deltas with CIs, renders, regression gate.

A leaderboard is a JSON file (format: `leaderboard.schema.json`) whose rows keep per-sample
scores and digests of each sample's output and extracted answer, so paired statistics and the
gate need no run directory. Saving regenerates `<stem>.md` and `<stem>.png` beside it.
"""

from spade.atomic import write_atomic
from spade.leaderboard.board import Leaderboard, SavedFiles, leaderboard_errors, locked
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
from spade.leaderboard.reproduction import (
    MAX_CHANGED_SAMPLES,
    ChangedSample,
    Reproduction,
    reproduce,
)
from spade.leaderboard.row import BenchmarkScore, Provenance, Row, as_row, row_from_run
from spade.leaderboard.run import RunResults, json_digest, load_run

__all__ = [
    "MAX_CHANGED_SAMPLES",
    "TOLERANCE_FLOOR",
    "Z_ONE_SIDED_95",
    "BenchmarkScore",
    "ChangedSample",
    "GateResult",
    "Leaderboard",
    "LeaderboardError",
    "Provenance",
    "Reproduction",
    "Row",
    "RunResults",
    "SavedFiles",
    "as_row",
    "compare",
    "deltas_table",
    "gate_failed",
    "gate_report",
    "json_digest",
    "leaderboard_errors",
    "locked",
    "load_run",
    "render_markdown",
    "render_png",
    "reproduce",
    "row_delta",
    "row_from_run",
    "write_atomic",
]
