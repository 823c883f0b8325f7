"""The regression gate: two checks per benchmark of the stored row, either one can fail it.

1. The drop check (statistical). A benchmark fails when `stored - current > tolerance`, with

       tolerance = max(floor, z × SE)

   `SE` is the standard error of the mean per-sample difference over the sample ids both runs
   scored (paired: most sampling noise cancels, so real drops stand out), or of the difference
   of two independent means when they share no id, or derived from the two stored CIs when
   either run kept no per-sample scores. `z` defaults to 1.645, a one-sided 95% bound: a drop
   fails only when it is unlikely to be noise. The floor (default 0.02, or
   `settings.tolerances[NAME]` of the stored row) keeps tiny but statistically detectable
   changes from failing a build: a drop must also matter. Higher is better for every primary
   metric. It applies to any two runs (other weights, sampled decoding, another backend), but
   it can only see a drop that is large against the slice's noise: with paired 0/1 scores
   whose share of changed samples is `p`, `SE ≈ sqrt(p / n)`, so on `n` samples it sees a drop
   `d` only when `d > 1.645 · sqrt(p / n)`; on a benchmark the model scores 0 on it sees
   nothing (a score cannot drop below 0), and on 2 samples it sees nothing either.
2. The reproduction check (`reproduction.py`): for a greedy run with the same weights hash,
   backend, dtype and device as the stored row, every sample's output, extracted answer and
   score must come back (compared as digests); the changed samples are listed, and more than
   the stated number of them (`MAX_CHANGED_SAMPLES`) fail the benchmark. It sees a single
   changed sample at any slice size, but only on the slice, and only when the identities match
   (otherwise it says why it did not run).

Also failed: a benchmark the current run lacks, or whose version, primary metric, generation
settings or options changed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from spade.evals.stats import common_ids, standard_error, standard_error_from_ci
from spade.leaderboard.reproduction import MAX_CHANGED_SAMPLES, Reproduction, reproduce
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
    so `delta == current - stored`; they are None when there is nothing to compare. `dropped`
    is the drop check's verdict (also true for a missing or incomparable benchmark),
    `reproduction` the reproduction check's (None when the benchmark could not be compared).
    """

    benchmark: str
    stored: float | None
    current: float | None
    delta: float | None
    tolerance: float | None
    dropped: bool
    reason: str
    reproduction: Reproduction | None = None

    @property
    def failed(self) -> bool:
        return self.dropped or (self.reproduction is not None and self.reproduction.failed)

    def line(self) -> str:
        return f"{'FAIL' if self.failed else 'ok'} {self.benchmark}: {self.reason}"

    def lines(self) -> list[str]:
        """The drop check's line, then the reproduction check's lines."""
        extra = self.reproduction.lines() if self.reproduction is not None else []
        return [self.line(), *extra]

    def failures(self) -> str:
        """What failed, briefly, for the verdict line."""
        parts = []
        if self.dropped:
            parts.append("not comparable" if self.delta is None else f"dropped {-self.delta:.3f}")
        if self.reproduction is not None and self.reproduction.failed:
            parts.append(f"{self.reproduction.count} changed samples")
        return f"{self.benchmark}: {' and '.join(parts)}"


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
    max_changed: int = MAX_CHANGED_SAMPLES,
) -> list[GateResult]:
    """One `GateResult` per benchmark of `stored`, in its order: the drop check, and the
    reproduction check with at most `max_changed` changed samples (or the stored row's
    `settings.max_changed_samples[NAME]`).

    Also fails a benchmark the current run lacks, or that measured something else (version,
    primary metric, generation settings or options changed: store a new row). Benchmarks only
    in the current run are not gated.
    """
    row = as_row(current)
    results = []
    for name, old in stored.benchmarks.items():
        new = row.benchmarks.get(name)
        if new is None:
            results.append(
                _failed(name, old.value, f"missing from this run (stored {old.value:.3f})")
            )
        elif reason := old.not_comparable_with(new):
            results.append(_failed(name, old.value, f"{reason}: not comparable; store a new row"))
        else:
            floor = stored.tolerance_floor(name)
            floor = tolerance_floor if floor is None else floor
            limit = stored.changed_sample_limit(name)
            limit = max_changed if limit is None else limit
            drop = _judge(name, _difference(stored, row, name), floor, z)
            results.append(replace(drop, reproduction=reproduce(stored, row, name, limit)))
    return results


def gate_failed(results: Iterable[GateResult]) -> bool:
    return any(result.failed for result in results)


def gate_report(results: list[GateResult]) -> str:
    """Per benchmark its drop-check line and reproduction lines (every changed sample), then
    a verdict line naming each failed benchmark and what failed it."""
    failed = [result.failures() for result in results if result.failed]
    verdict = f"gate: FAILED ({'; '.join(failed)})" if failed else "gate: passed"
    return "\n".join([*(line for result in results for line in result.lines()), verdict])


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
