"""One evaluation run as the leaderboard sees it: `results.json` plus per-sample scores.

`spade-eval` writes `DIR/results.json` and `DIR/samples/*.jsonl` (one `SampleResult` per
line). Only the fields the leaderboard uses are checked here; everything else passes through.
Each sample's output and extracted answer are kept as short digests (`json_digest`), so the
gate can tell a reproduced sample from a changed one without storing the text.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from spade.evals.samples import SampleResult
from spade.leaderboard.errors import LeaderboardError
from spade.leaderboard.validation import raise_first, read_json, schema_errors

RESULTS_FILE = "results.json"
SAMPLES_DIR = "samples"
DIGEST_CHARS = 16
"""Hex characters kept of a value's sha256: 64 bits, so two different outputs of one sample
share a digest with odds of 1 in 1.8e19."""

_CI = {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}
RESULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema_version", "checkpoint", "benchmarks"],
    "properties": {
        "schema_version": {"const": 1},
        "created": {"type": "string"},
        "spade_version": {"type": "string"},
        "checkpoint": {"type": "object", "required": ["spec"]},
        "settings": {"type": "object"},
        "benchmarks": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["version", "n", "primary", "metrics"],
                "properties": {
                    "version": {"type": "string"},
                    "n": {"type": "integer", "minimum": 0},
                    "primary": {"type": "string"},
                    "parse_failures": {"type": "integer", "minimum": 0},
                    "scoring_timeouts": {"type": "integer", "minimum": 0},
                    "metrics": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "object",
                            "required": ["value", "ci95"],
                            "properties": {"value": {"type": "number"}, "ci95": _CI},
                        },
                    },
                },
            },
        },
    },
}
"""The part of the results.json format the leaderboard relies on."""


@dataclass(frozen=True)
class RunResults:
    """A run's `results.json` content and, per benchmark, `{sample_id: primary score}`,
    `{sample_id: output digest}`, `{sample_id: extracted answer digest}` and, per secondary
    metric, `{sample_id: value}` (`metrics`).

    Benchmarks without an entry in `samples` kept no per-sample scores; comparisons then fall
    back to the summary values and CIs. A record without an `output` (`answer`) field has no
    output (answer) digest.
    """

    results: dict[str, Any]
    samples: dict[str, dict[str, float]] = field(default_factory=dict)
    results_dir: Path | None = None
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    answers: dict[str, dict[str, str]] = field(default_factory=dict)
    metrics: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """Per benchmark, per metric a sample reports besides its score (not per-slice ones such as
    `return[kind=game]`), `{sample_id: value}`."""

    @classmethod
    def from_records(
        cls,
        results: dict[str, Any],
        records: Iterable[SampleResult | Mapping[str, Any]],
        results_dir: Path | None = None,
    ) -> RunResults:
        """From in-memory results and sample records (`SampleResult`s or their dicts)."""
        run = cls(results, results_dir=results_dir)
        for index, record in enumerate(records):
            data = record.as_dict() if isinstance(record, SampleResult) else record
            run.add_sample(data, f"sample record {index}")
        return run

    def check(self, where: str = RESULTS_FILE) -> None:
        """Raise `LeaderboardError` (one line, naming the field) when `results` is unusable."""
        raise_first(where, results_errors(self.results))

    def add_sample(self, data: object, where: str) -> None:
        """Add one sample record's score and the digests of its output and extracted answer;
        `where` names the record in errors."""
        if not isinstance(data, Mapping):
            raise LeaderboardError(f"{where}: a sample record must be a JSON object")
        benchmark, sample_id = data.get("benchmark"), data.get("sample_id")
        score = data.get("score")
        if not isinstance(benchmark, str) or not isinstance(sample_id, str):
            raise LeaderboardError(f"{where}: needs string fields 'benchmark' and 'sample_id'")
        if not isinstance(score, int | float) or not math.isfinite(score):
            raise LeaderboardError(f"{where}: score must be a finite number, got {score!r}")
        scores = self.samples.setdefault(benchmark, {})
        if sample_id in scores:
            raise LeaderboardError(f"{where}: {benchmark} sample {sample_id!r} appears twice")
        scores[sample_id] = float(score)
        for key, digests in (("output", self.outputs), ("answer", self.answers)):
            if key in data:
                digests.setdefault(benchmark, {})[sample_id] = json_digest(data[key])
        for metric, value in sample_metrics(data.get("metrics")).items():
            self.metrics.setdefault(benchmark, {}).setdefault(metric, {})[sample_id] = value


def sample_metrics(metrics: object) -> dict[str, float]:
    """A sample record's own metrics worth pairing on: finite numbers, slices left out (a
    slice's value is its metric's, on the samples in the slice)."""
    if not isinstance(metrics, Mapping):
        return {}
    return {
        name: float(value)
        for name, value in metrics.items()
        if isinstance(name, str)
        and "[" not in name
        and not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(value)
    }


def json_digest(value: object) -> str:
    """A short digest of a sample's output or extracted answer, equal for the in-memory value
    and its JSONL copy.

    The value is serialised as `spade-eval` writes it (orjson, `repr` for what JSON cannot
    hold), with sorted keys, so a tuple and the list it was written as, or a dict read back in
    another key order, give the same digest.
    """
    options = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
    text = orjson.dumps(value, default=repr, option=options)
    return hashlib.sha256(text).hexdigest()[:DIGEST_CHARS]


def results_errors(results: object) -> list[str]:
    errors = schema_errors(results, RESULTS_SCHEMA)
    if errors or not isinstance(results, dict):
        return errors
    for name, entry in results["benchmarks"].items():
        if entry["primary"] not in entry["metrics"]:
            errors.append(f"benchmarks.{name}.primary: {entry['primary']!r} is not in its metrics")
    return errors


def load_run(results_dir: str | Path) -> RunResults:
    """Read `results.json` and `samples/*.jsonl` from a `spade-eval --output` folder."""
    folder = Path(results_dir)
    path = folder / RESULTS_FILE
    if not path.is_file():
        raise LeaderboardError(f"{path}: missing (is {folder} a spade-eval output folder?)")
    results = read_json(path)
    raise_first(str(path), results_errors(results))
    assert isinstance(results, dict)
    run = RunResults(results, results_dir=folder)
    # Keyed by each line's `benchmark` field, not the file name: names such as
    # `suite:NAME@VERSION` may be spelled differently on disk.
    for jsonl in sorted((folder / SAMPLES_DIR).glob("*.jsonl")):
        _read_samples(jsonl, run)
    return run


def _read_samples(path: Path, run: RunResults) -> None:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LeaderboardError(f"{path}: cannot read ({exc})") from None
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LeaderboardError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        run.add_sample(data, f"{path}:{lineno}")
