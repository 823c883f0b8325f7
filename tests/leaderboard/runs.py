"""Builders for in-memory runs: results.json content and per-sample scores, as spade-eval
writes them (real `mean_ci` intervals, real `SampleResult` records)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spade.evals.samples import SampleResult
from spade.evals.stats import mean_ci
from spade.leaderboard import Provenance, Row, RunResults, row_from_run

Scores = Mapping[str, float]
PROVENANCE = Provenance("spade-eval --checkpoint tiny", "abc123", None, "test-host")


def binary_scores(n: int, correct: int) -> dict[str, float]:
    """`n` samples with ids 0..n-1, the first `correct` of them right."""
    return {str(i): float(i < correct) for i in range(n)}


def flipped(scores: Scores, down: int = 0, up: int = 0) -> dict[str, float]:
    """`scores` with the last `down` right answers made wrong and the first `up` wrong ones
    made right: a controlled change on the same ids."""
    result = dict(scores)
    right = [i for i, s in scores.items() if s == 1.0]
    wrong = [i for i, s in scores.items() if s == 0.0]
    for sample_id in right[len(right) - down :] if down else []:
        result[sample_id] = 0.0
    for sample_id in wrong[:up]:
        result[sample_id] = 1.0
    return result


def run(
    benchmarks: Mapping[str, Scores],
    versions: Mapping[str, str] | None = None,
    keep_samples: bool = True,
    checkpoint: str = "tiny",
    weights_sha256: str | None = None,
    outputs: Mapping[str, Mapping[str, Any]] | None = None,
    temperature: float = 0.0,
    backend: str = "transformers",
    answers: Mapping[str, Mapping[str, Any]] | None = None,
    limit: int | None = None,
    max_gen_toks: int = 64,
    options: Mapping[str, Any] | None = None,
    metrics: Mapping[str, Mapping[str, Scores]] | None = None,
) -> RunResults:
    """A run of `benchmarks` (`{name: {sample_id: score}}`). Each sample's output is
    `outputs[name][sample_id]` where given, else `"answer to ID"`; its extracted answer
    `answers[name][sample_id]`, else `"ID"`; its other metrics `metrics[name][metric][sample_id]`
    (each reported in results.json too). Without `weights_sha256` the gate's reproduction
    check does not apply (no identity to reproduce)."""
    results: dict[str, Any] = {
        "schema_version": 1,
        "created": "2025-01-01T00:00:00+00:00",
        "spade_version": "0.1.0",
        "checkpoint": {
            "spec": checkpoint,
            "backend": backend,
            "path": None,
            "weights_sha256": weights_sha256,
            "dtype": "float32",
        },
        "settings": {"limit": limit},
        "benchmarks": {},
    }
    records = []
    for name, scores in benchmarks.items():
        extra = (metrics or {}).get(name, {})
        reported = {"accuracy": scores, **extra}
        results["benchmarks"][name] = {
            "version": (versions or {}).get(name, "1.0"),
            "n": len(scores),
            "primary": "accuracy",
            "metrics": {m: _summary(values) for m, values in reported.items()},
            "parse_failures": 0,
            "data_sha256": {},
            "generation": {"max_gen_toks": max_gen_toks, "temperature": temperature, "n": 1},
            "options": dict(options or {}),
            "seconds": 1.0,
        }
        given = (outputs or {}).get(name, {})
        parsed = (answers or {}).get(name, {})
        records += [
            SampleResult(
                name,
                i,
                "prompt",
                given.get(i, f"answer to {i}"),
                parsed.get(i, i),
                None,
                score,
                metrics={m: values[i] for m, values in extra.items() if i in values},
            )
            for i, score in scores.items()
        ]
    return RunResults.from_records(results, records if keep_samples else [])


def _summary(values: Scores) -> dict[str, Any]:
    mean, lo, hi = mean_ci(list(values.values()))
    return {"value": mean, "ci95": [lo, hi]}


def row(label: str, benchmarks: Mapping[str, Scores], **kwargs: Any) -> Row:
    return row_from_run(run(benchmarks, **kwargs), label, PROVENANCE)
