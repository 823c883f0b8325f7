"""Confidence intervals and paired comparisons for per-sample benchmark scores.

Everything here is pure and seeded: the same scores and seed always give the same numbers, so
results records, rendered leaderboards and the regression gate are reproducible.

The resampling is `scipy.stats.bootstrap` (percentile method, `RESAMPLES` resamples in batches
of at most `_CHUNK_CELLS` drawn values, so a 14k-sample benchmark stays a few MB); the exact
tests are `scipy.stats.binomtest` and, for seeds of training runs, `spade.evals.seed_stats`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.stats
from numpy.typing import NDArray

RESAMPLES = 2000
LEVEL = 0.95
_CHUNK_CELLS = 2_000_000
"""Cap on the values one batch of resamples draws, so a 14k-sample benchmark stays a few MB
(the batch size does not change the numbers: the draws are the same stream)."""

Floats = NDArray[np.float64]


@dataclass(frozen=True)
class Delta:
    """`current - baseline` for one benchmark, with its confidence interval and p-value.

    `method` names where the p-value comes from: `mcnemar` (exact test on discordant pairs,
    with the CI from the paired bootstrap), `paired_bootstrap`, `unpaired_bootstrap` (no sample
    ids in common) or `normal_from_ci` (no per-sample scores: summaries only).
    """

    delta: float
    lo: float
    hi: float
    n_common: int
    p_value: float
    method: str

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_value < alpha


def mean_ci(
    scores: Sequence[float] | Floats,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> tuple[float, float, float]:
    """(mean, lo, hi): the mean and its percentile-bootstrap confidence interval.

    Raises ValueError for no scores (a mean of nothing has no sensible value). Equal scores
    give a zero-width interval.
    """
    values = finite_array(scores, "scores")
    if np.all(values == values[0]):
        # Exactly collapsed: a summed mean of equal floats can be off by one ulp.
        return float(values[0]), float(values[0]), float(values[0])
    mean = float(values.mean())
    lo, hi = percentile_interval(bootstrap_distribution((values,), np.mean, resamples, seed), level)
    # Keep mean inside its interval, which renderers and `value ± half-width` rely on; the
    # percentile interval can miss it by a rounding error on tiny, skewed samples.
    return mean, min(lo, mean), max(hi, mean)


def paired_delta(
    baseline: Mapping[str, float],
    current: Mapping[str, float],
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> Delta:
    """Mean of `current - baseline` over the sample ids both have, with a paired bootstrap CI.

    The samples are resampled as pairs (the bootstrap of the per-sample differences). When every
    score on both sides is 0 or 1, the p-value is McNemar's exact test; otherwise it is the
    two-sided bootstrap p-value (`_bootstrap_p`: how much of the bootstrap distribution lies
    across 0). Raises ValueError when the two share no sample id (use `unpaired_delta` then).
    """
    ids = common_ids(baseline, current)
    if not ids:
        raise ValueError("no sample ids in common: a paired comparison needs shared samples")
    before = np.array([baseline[i] for i in ids], dtype=np.float64)
    after = np.array([current[i] for i in ids], dtype=np.float64)
    diffs = finite_array(after - before, "paired scores")
    delta = float(diffs.mean())
    means = bootstrap_distribution((diffs,), np.mean, resamples, seed)
    lo, hi = percentile_interval(means, level)
    if _binary(before) and _binary(after):
        worse = int(np.sum((before == 1.0) & (after == 0.0)))
        better = int(np.sum((before == 0.0) & (after == 1.0)))
        p_value, method = mcnemar_exact(worse, better), "mcnemar"
    else:
        p_value, method = _bootstrap_p(means), "paired_bootstrap"
    return Delta(delta, min(lo, delta), max(hi, delta), len(ids), p_value, method)


def unpaired_delta(
    baseline: Sequence[float],
    current: Sequence[float],
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> Delta:
    """Difference of means of two independent samples, each resampled on its own."""
    before = finite_array(baseline, "baseline scores")
    after = finite_array(current, "current scores")
    delta = float(after.mean() - before.mean())
    diffs = bootstrap_distribution((after, before), _difference_of_means, resamples, seed)
    lo, hi = percentile_interval(diffs, level)
    return Delta(
        delta, min(lo, delta), max(hi, delta), 0, _bootstrap_p(diffs), "unpaired_bootstrap"
    )


def summary_delta(
    baseline_value: float,
    baseline_ci: tuple[float, float],
    current_value: float,
    current_ci: tuple[float, float],
    level: float = LEVEL,
) -> Delta:
    """Delta from two means and their CIs alone, treating them as independent and normal.

    The fallback when a run kept no per-sample scores; coarse (it ignores pairing, which
    usually makes it conservative).
    """
    z = normal_quantile(0.5 + level / 2)
    se = math.hypot(
        standard_error_from_ci(baseline_ci, level), standard_error_from_ci(current_ci, level)
    )
    delta = current_value - baseline_value
    if se == 0:
        return Delta(delta, delta, delta, 0, 1.0 if delta == 0 else 0.0, "normal_from_ci")
    p_value = math.erfc(abs(delta) / se / math.sqrt(2))
    return Delta(delta, delta - z * se, delta + z * se, 0, p_value, "normal_from_ci")


def mcnemar_exact(worse: int, better: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts.

    Under no difference each discordant pair is equally likely to go either way, so the
    smaller count is Binomial(worse + better, 1/2): the two-sided binomial test, which for
    p = 1/2 doubles its lower tail (capped at 1).
    """
    if worse < 0 or better < 0:
        raise ValueError("discordant counts must be non-negative")
    n = worse + better
    if n == 0:
        return 1.0
    return float(scipy.stats.binomtest(min(worse, better), n, 0.5).pvalue)


def common_ids(baseline: Mapping[str, float], current: Mapping[str, float]) -> list[str]:
    """Sample ids present in both, in the baseline's order (deterministic resampling)."""
    return [sample_id for sample_id in baseline if sample_id in current]


def standard_error(scores: Sequence[float] | Floats) -> float:
    """Standard error of the mean (sample standard deviation / √n); 0 below two scores."""
    values = np.asarray(scores, dtype=np.float64)
    if values.size < 2:
        return 0.0
    return float(values.std(ddof=1) / math.sqrt(values.size))


def standard_error_from_ci(ci: tuple[float, float], level: float = LEVEL) -> float:
    """The standard error a symmetric normal CI of this width implies."""
    return max(0.0, ci[1] - ci[0]) / (2 * normal_quantile(0.5 + level / 2))


def normal_quantile(p: float) -> float:
    """Inverse standard normal CDF."""
    if not 0 < p < 1:
        raise ValueError(f"quantile level must be in (0, 1), got {p}")
    return float(scipy.stats.norm.ppf(p))


def bootstrap_distribution(
    samples: tuple[NDArray[Any], ...],
    statistic: Callable[..., Floats],
    resamples: int,
    seed: int,
    cells_per_resample: int | None = None,
) -> Floats:
    """`resamples` values of `statistic` on resamples of `samples`, each resampled on its own.

    `scipy.stats.bootstrap` with the percentile method, seeded; `statistic(*resampled,
    axis=-1)` gets one row per resample. Intervals are taken from this distribution
    (`percentile_interval`: the quantiles scipy's percentile method takes), which the p-values
    need anyway. `cells_per_resample` (default: the samples' total size) is what one resample
    costs the statistic in memory; batches hold at most `_CHUNK_CELLS` of those cells.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    # scipy needs two observations per sample; one observation, passed twice, resamples to the
    # same constant it would alone.
    data = tuple(np.repeat(sample, 2) if sample.size == 1 else sample for sample in samples)
    result = scipy.stats.bootstrap(
        data,
        statistic,
        n_resamples=resamples,
        batch=max(1, _CHUNK_CELLS // (cells_per_resample or sum(s.size for s in data))),
        vectorized=True,
        paired=False,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return np.asarray(result.bootstrap_distribution, dtype=np.float64)


def percentile_interval(distribution: Floats, level: float) -> tuple[float, float]:
    """The central `level` interval of a bootstrap distribution (linear quantiles, as scipy's
    percentile method takes them)."""
    if not 0 < level < 1:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    alpha = 1 - level
    lo, hi = np.quantile(distribution, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def finite_array(scores: Sequence[float] | Floats, what: str) -> Floats:
    """`scores` as a non-empty 1-D float array; ValueError naming `what` otherwise."""
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"{what}: need a non-empty list of numbers")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{what}: contains NaN or infinity")
    return values


def _binary(values: Floats) -> bool:
    return bool(np.all((values == 0.0) | (values == 1.0)))


def _difference_of_means(after: Floats, before: Floats, axis: int = -1) -> Floats:
    return np.asarray(after.mean(axis=axis) - before.mean(axis=axis))


def _bootstrap_p(means: Floats) -> float:
    """Two-sided bootstrap p-value for "the mean is 0": twice the smaller tail across 0.

    The +1s count the observed statistic among the resamples (the convention of
    `scipy.stats.permutation_test` for random resamples), so p is never below 2/(resamples + 1).
    """
    below = int(np.sum(means <= 0))
    above = int(np.sum(means >= 0))
    return min(1.0, 2 * (min(below, above) + 1) / (means.size + 1))
