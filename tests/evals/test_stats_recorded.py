"""The scipy-based bootstrap on recorded per-sample scores gives the numbers the hand-written one
recorded: the ladder0 experiment's results records and the held-out deltas the README quotes
from `leaderboards/main.json`.

Means and McNemar p-values are deterministic and must agree (means at the 3 decimals rows
show). Bootstrap CI bounds and p-values come from other random draws (scipy resamples indices,
the old code drew multinomial counts), so they agree within the Monte Carlo error of 2000
resamples: an old bound is the α/2 (or 1 − α/2) quantile of its 2000 draws, so its rank among
the new 2000 draws must be within 4 standard errors, √(2·t(1 − t)/2000) with t = α/2, of t.
On discrete scores that can move a rendered bound by a lattice step (5 of 84: +0.119 → +0.107).
"""

import math
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from spade.evals.stats import RESAMPLES, bootstrap_distribution, mean_ci, paired_delta

ROOT = Path(__file__).resolve().parents[2]
LADDER0 = ROOT / "experiments" / "ladder0"
MAIN = ROOT / "leaderboards" / "main.json"
HELDOUT = "suite:spade-seed@1.1.0:heldout"
TAIL = 0.025


def within_monte_carlo(bound: float, draws: np.ndarray, tail: float) -> bool:
    """Whether `bound`, the `tail` quantile of another 2000 draws, ranks at `tail` among these."""
    slack = 4 * math.sqrt(2 * tail * (1 - tail) / RESAMPLES)
    below = float(np.mean(draws < bound - 1e-12))
    at_or_below = float(np.mean(draws <= bound + 1e-12))
    return below - slack <= tail <= at_or_below + slack


def interval_of(draws: np.ndarray, value: float) -> tuple[float, float]:
    """The 95% percentile interval of `draws`, widened to hold `value` as the stats module does."""
    lo, hi = np.quantile(draws, [TAIL, 1 - TAIL])
    return min(float(lo), value), max(float(hi), value)


def bootstrap_p_within_monte_carlo(old: float, new: float) -> bool:
    tail = min(old, new) / 2
    return abs(old - new) <= 2 * 4 * math.sqrt(2 * tail * (1 - tail) / RESAMPLES) + 4 / RESAMPLES


def ladder0_scores(arm: str, benchmark: str, metric: str) -> dict[str, float]:
    lines = (LADDER0 / f"{arm}.samples.jsonl").read_bytes().splitlines()
    records = [orjson.loads(line) for line in lines]
    return {r["id"]: float(r[metric]) for r in records if r["benchmark"] == benchmark}


@pytest.mark.parametrize("arm", ["base", "warm"])
@pytest.mark.parametrize("benchmark", ["ladder", "ladder_pool"])
@pytest.mark.parametrize("metric", ["success", "return"])
def test_mean_ci_reproduces_the_ladder0_records(arm: str, benchmark: str, metric: str) -> None:
    recorded = orjson.loads((LADDER0 / f"{arm}.results.json").read_bytes())
    record = recorded["benchmarks"][benchmark]["metrics"][metric]
    scores = np.array(list(ladder0_scores(arm, benchmark, metric).values()))
    mean, lo, hi = mean_ci(scores)
    assert f"{mean:.3f}" == f"{record['value']:.3f}"
    draws = bootstrap_distribution((scores,), np.mean, RESAMPLES, seed=0)
    assert (lo, hi) == interval_of(draws, mean)
    old_lo, old_hi = record["ci95"]
    assert within_monte_carlo(old_lo, draws, TAIL), (old_lo, lo)
    assert within_monte_carlo(old_hi, draws, 1 - TAIL), (old_hi, hi)


# Δ, lo, hi, p, method: `paired_delta` before scipy (commit 97fecd2), seed 0.
LADDER0_DELTAS = {
    ("ladder", "success"): (0.015625, 0.0, 0.046875, 1.0, "mcnemar"),
    ("ladder", "return"): (
        0.035417187499999996, 0.003125, 0.0781265625, 0.004997501249375313, "paired_bootstrap"
    ),
    ("ladder_pool", "success"): (
        0.05952380952380952, 0.011904761904761904, 0.11904761904761904, 0.0625, "mcnemar"
    ),
    ("ladder_pool", "return"): (
        0.1446702380952381, 0.08677767857142858, 0.21203791666666666, 0.0009995002498750624,
        "paired_bootstrap",
    ),
}  # fmt: skip
README_DELTAS = {  # the held-out `return` deltas the README quotes from main.json's rows
    ("warm", "warm+fixed"): (
        -0.04854166666666667, -0.09208333333333334, -0.012083333333333333, 0.00399800099950025,
        "paired_bootstrap",
    ),
    ("warm", "warm+spade"): (
        -0.008333333333333333, -0.025000000000000005, 0.0, 0.7246376811594203,
        "paired_bootstrap",
    ),
    ("warm+fixed", "warm+spade"): (
        0.04020833333333334, 0.004999999999999998, 0.08294270833333318, 0.03498250874562719,
        "paired_bootstrap",
    ),
}  # fmt: skip


def main_row_scores(label: str, benchmark: str, metric: str | None) -> dict[str, float]:
    rows = {row["label"]: row for row in orjson.loads(MAIN.read_bytes())["rows"]}
    row = rows[label]
    scores = (
        row["samples"][benchmark] if metric is None else row["sample_metrics"][benchmark][metric]
    )
    return {sample_id: float(value) for sample_id, value in scores.items()}


def delta_cases() -> list[Any]:  # pytest.param sets
    cases = [
        pytest.param(
            ladder0_scores("base", benchmark, metric),
            ladder0_scores("warm", benchmark, metric),
            old,
            id=f"ladder0 warm-base {benchmark} {metric}",
        )
        for (benchmark, metric), old in LADDER0_DELTAS.items()
    ]
    cases += [
        pytest.param(
            main_row_scores(baseline, HELDOUT, "return"),
            main_row_scores(current, HELDOUT, "return"),
            old,
            id=f"main {current}-{baseline} heldout return",
        )
        for (baseline, current), old in README_DELTAS.items()
    ]
    # A primary-score delta the rendered main.md shows: McNemar, so p is exact.
    cases.append(
        pytest.param(
            main_row_scores("smollm2-135m", "gsm8k", None),
            main_row_scores("warm", "gsm8k", None),
            (-0.4, -0.8, 0.0, 0.5, "mcnemar"),
            id="main warm-smollm2-135m gsm8k",
        )
    )
    return cases


@pytest.mark.parametrize(("before", "after", "old"), delta_cases())
def test_paired_delta_reproduces_the_recorded_deltas(
    before: dict[str, float], after: dict[str, float], old: tuple[float, float, float, float, str]
) -> None:
    old_delta, old_lo, old_hi, old_p, old_method = old
    delta = paired_delta(before, after)
    assert f"{delta.delta:.3f}" == f"{old_delta:.3f}"
    assert delta.method == old_method
    ids = [i for i in before if i in after]
    draws = bootstrap_distribution(
        (np.array([after[i] - before[i] for i in ids]),), np.mean, RESAMPLES, seed=0
    )
    assert (delta.lo, delta.hi) == interval_of(draws, delta.delta)
    assert within_monte_carlo(old_lo, draws, TAIL), (old_lo, delta.lo)
    assert within_monte_carlo(old_hi, draws, 1 - TAIL), (old_hi, delta.hi)
    if old_method == "mcnemar":
        assert delta.p_value == pytest.approx(old_p, rel=1e-12)
    else:
        assert bootstrap_p_within_monte_carlo(old_p, delta.p_value), (old_p, delta.p_value)
