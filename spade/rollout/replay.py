"""Saved predictions, replayed: `{"benchmark": NAME, "id": SAMPLE_ID, "output": ...}` lines.

A single-turn request is answered with the saved text (so one scoring path serves live and
saved outputs); a multi-turn episode is handed its whole saved output by the player, and the
episode's driver replays it (`Driver.replay`): a list of actions, of moves, of BFCL calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from spade.models.policy import Completion
from spade.rollout.requests import GenRequest


class PredictionsError(ValueError):
    """A predictions file is unreadable, malformed, or lacks a requested sample."""


class Predictions:
    """Saved outputs by benchmark and sample id; a `Responder` for single-turn requests."""

    def __init__(self, predictions: dict[str, dict[str, Any]]) -> None:
        self.predictions = predictions

    @classmethod
    def from_file(cls, path: Path) -> Predictions:
        return cls(read_predictions(path))

    def ids(self, benchmark: str) -> list[str]:
        return list(self.predictions.get(benchmark, {}))

    def saved(self, benchmark: str, sample_id: str) -> Any:
        """The saved output itself (for multi-turn benchmarks, whatever their drivers replay)."""
        saved = self.predictions.get(benchmark, {})
        if sample_id not in saved:
            raise PredictionsError(f"no prediction for {benchmark} sample {sample_id!r}")
        return saved[sample_id]

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[Completion]]:
        answers = []
        for request in requests:
            output = self.saved(request.phase, request.sample_id)
            texts = output if _is_text_list(output) else [output]
            answers.append([_saved_completion(text) for text in texts])
        return answers


def _saved_completion(output: Any) -> Completion:
    """A saved output is text only (no token ids); one that is not text is an empty answer
    (it scores 0, never raises)."""
    text = output if isinstance(output, str) else ""
    return Completion(text=text, finish_reason="stop", prompt_tokens=0, completion_tokens=0)


def _is_text_list(output: Any) -> bool:
    return isinstance(output, list) and all(isinstance(o, str) for o in output) and bool(output)


def read_predictions(path: Path) -> dict[str, dict[str, Any]]:
    """Parse a predictions JSONL file; errors name the file and line."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise PredictionsError(f"{path}: cannot read ({exc.strerror})") from None
    found: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise PredictionsError(f"{path}:{number}: not JSON ({exc})") from None
        if not isinstance(record, dict) or not {"benchmark", "id", "output"} <= record.keys():
            raise PredictionsError(f'{path}:{number}: need "benchmark", "id" and "output"')
        benchmark, sample_id = str(record["benchmark"]), str(record["id"])
        if sample_id in found.setdefault(benchmark, {}):
            raise PredictionsError(f"{path}:{number}: duplicate {benchmark} id {sample_id!r}")
        found[benchmark][sample_id] = record["output"]
    if not found:
        raise PredictionsError(f"{path}: no predictions")
    return found
