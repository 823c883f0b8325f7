"""The regression gate: does any benchmark drop beyond its tolerance against a stored row?

A benchmark fails when `stored - current > tolerance`, with

    tolerance = max(floor, z × SE)

`SE` is the standard error of the mean per-sample difference over the sample ids both runs
scored (paired: most sampling noise cancels, so real drops stand out), or of the difference of
two independent means when they share no id, or derived from the two stored CIs when either run
kept no per-sample scores. `z` defaults to 1.645, a one-sided 95% bound: a drop fails only when
it is unlikely to be noise. The floor (default 0.02, or `settings.tolerances[NAME]` of the
stored row) keeps tiny but statistically detectable changes from failing a build: a drop must
also matter. Higher is better for every primary metric.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from spade.evals.stats import common_ids, standard_error, standard_error_from_ci
from spade.leaderboard.row import Row, as_row
from spade.leaderboard.run import RunResults

TOLERANCE_FLOOR = 0.02
Z_ONE_SIDED_95 = 1.645
_EPSILON = 1e-12
"""Float slack, so a drop exactly at the tolerance passes however it was summed."""


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict on one benchmark of the stored row.

    `stored` and `current` are the means actually compared (over shared samples when paired),
    so `delta == current - stored`; they are None when there is nothing to compare.
    """

    benchmark: str
    stored: float | None
    current: float | None
    delta: float | None
    tolerance: float | None
    failed: bool
    reason: str

    def line(self) -> str:
        return f"{'FAIL' if self.failed else 'ok'} {self.benchmark}: {self.reason}"


@dataclass(frozen=True)
class _Difference:
    stored: float
    current: float
    se: float
    basis: str


def compare(
    current: RunResults | Row,
    stored: Row,
    tolerance_floor: float = TOLERANCE_FLOOR,
    z: float = Z_ONE_SIDED_95,
) -> list[GateResult]:
    """One `GateResult` per benchmark of `stored`, in its order.

    Also fails a benchmark the current run lacks, or whose version or primary metric changed
    (the scores are then not comparable: store a new row). Benchmarks only in the current run
    are not gated.
    """
    row = as_row(current)
    results = []
    for name, old in stored.benchmarks.items():
        new = row.benchmarks.get(name)
        if new is None:
            results.append(
                _failed(name, old.value, f"missing from this run (stored {old.value:.3f})")
            )
        elif new.version != old.version:
            reason = f"version changed {old.version} → {new.version}: not comparable"
            results.append(_failed(name, old.value, f"{reason}; store a new row"))
        elif new.primary != old.primary:
            reason = f"primary metric changed {old.primary} → {new.primary}: not comparable"
            results.append(_failed(name, old.value, f"{reason}; store a new row"))
        else:
            floor = stored.tolerance_floor(name)
            floor = tolerance_floor if floor is None else floor
            results.append(_judge(name, _difference(stored, row, name), floor, z))
    return results


def gate_failed(results: Iterable[GateResult]) -> bool:
    return any(result.failed for result in results)


def gate_report(results: list[GateResult]) -> str:
    """One line per benchmark, then a verdict line naming the failures."""
    failed = [result.benchmark for result in results if result.failed]
    verdict = f"gate: FAILED ({', '.join(failed)})" if failed else "gate: passed"
    return "\n".join([*(result.line() for result in results), verdict])


def _judge(name: str, diff: _Difference, floor: float, z: float) -> GateResult:
    delta = diff.current - diff.stored
    margin = z * diff.se
    tolerance = max(floor, margin)
    failed = -delta > tolerance + _EPSILON
    moved = f"{diff.stored:.3f} → {diff.current:.3f}, {diff.basis}"
    why = f"max(floor {floor:.3f}, {z:g} × SE {diff.se:.3f})"
    if failed:
        reason = f"dropped {-delta:.3f} ({moved}), beyond tolerance {tolerance:.3f} = {why}"
    else:
        reason = f"{delta:+.3f} ({moved}), within tolerance {tolerance:.3f} = {why}"
    return GateResult(name, diff.stored, diff.current, delta, tolerance, failed, reason)


def _difference(stored: Row, current: Row, name: str) -> _Difference:
    before, after = stored.samples.get(name), current.samples.get(name)
    if before and after:
        ids = common_ids(before, after)
        if ids:
            old = np.array([before[i] for i in ids])
            new = np.array([after[i] for i in ids])
            basis = f"paired on {len(ids)} samples"
            return _Difference(
                float(old.mean()), float(new.mean()), standard_error(new - old), basis
            )
        old, new = np.array(list(before.values())), np.array(list(after.values()))
        se = math.hypot(standard_error(old), standard_error(new))
        return _Difference(float(old.mean()), float(new.mean()), se, "unpaired: no shared samples")
    old_score, new_score = stored.benchmarks[name], current.benchmarks[name]
    se = math.hypot(standard_error_from_ci(old_score.ci95), standard_error_from_ci(new_score.ci95))
    return _Difference(old_score.value, new_score.value, se, "from CIs: no per-sample scores")


def _failed(name: str, stored: float, reason: str) -> GateResult:
    return GateResult(name, stored, None, None, None, True, reason)
