"""Per-sample records for BFCL entries, and the weights that make the primary metric BFCL's.

BFCL's multi-turn overall accuracy is the unweighted mean of its categories' accuracies.
A run's primary value is the mean of the per-sample scores, so each sample's score is its
pass/fail times `N / (K * n_c)` (N samples, K categories present, n_c samples of its
category): with equal counts per category (full runs, the stratified slices) every weight
is exactly 1 and scores are 0/1; otherwise the weights keep the mean equal to the mean of
the category accuracies. `accuracy[CATEGORY]` holds each category's plain pass/fail.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from spade.evals.bfcl.data import BfclEntry, category_of
from spade.evals.bfcl.scoring import Verdict
from spade.evals.samples import SampleResult


def category_weights(ids: list[str]) -> dict[str, float]:
    counts = Counter(category_of(sample_id) for sample_id in ids)
    return {category: len(ids) / (len(counts) * count) for category, count in counts.items()}


def sample_result(
    benchmark: str,
    entry: BfclEntry,
    weight: float,
    verdict: Verdict,
    prompt: Any,
    output: Any,
    answer: Any,
    parsed: bool,
    extra: dict[str, Any],
) -> SampleResult:
    passed = float(verdict.valid)
    return SampleResult(
        benchmark=benchmark,
        sample_id=entry.id,
        prompt=prompt,
        output=output,
        answer=answer,
        target=entry.ground_truth,
        score=passed * weight,
        metrics={f"accuracy[{entry.category}]": passed},
        parsed=parsed,
        extra={
            "category": entry.category,
            "valid": verdict.valid,
            "weight": weight,
            "error_type": verdict.error_type,
            "error_message": verdict.error_message,
            "failed_turn": verdict.turn,
            "refused_calls": verdict.refused,
            **extra,
        },
    )
