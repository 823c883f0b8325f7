"""An experiment's verdict with the training run as the unit: tests and intervals over seeds.

An experiment trains each arm on several seeds and evaluates every run on the same envs, so its
evidence is a seeds × envs matrix of differences (treatment − control per cell, each cell a
mean over that env's episodes). The episodes of one run share one set of trained weights, so
they are not independent evidence about the method: the seed is the unit.

- `seed_effects`: the effect per seed (each seed's mean difference over its envs).
- `sign_flip_test`: the pre-registered test, an exact paired sign-flip permutation test on those
  per-seed effects.
- `cluster_bootstrap_ci`: the CI of the mean difference, resampling seeds and envs independently
  (a two-way, "pigeonhole" bootstrap), so variation between seeds and between envs both widen it.
- `minimum_detectable_effect`, `min_attainable_p`: what the design can detect at the seeds run.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Literal

import numpy as np
import scipy.stats

from spade.evals.stats import (
    LEVEL,
    RESAMPLES,
    Floats,
    bootstrap_distribution,
    finite_array,
    percentile_interval,
)

Alternative = Literal["two-sided", "greater", "less"]
ALTERNATIVES: tuple[Alternative, ...] = ("two-sided", "greater", "less")
ALPHA = 0.05
EXACT_MAX_SEEDS = 20
"""Up to this many seeds the sign-flip test enumerates all 2^n flips (exact p-value)."""
FLIP_RESAMPLES = 100_000
"""Random sign flips drawn above `EXACT_MAX_SEEDS` seeds."""
_FLIP_CELLS = 2_000_000
"""Cap on the values one batch of sign flips holds (2^20 flips of 20 seeds would be 160 MB)."""

Matrix = Sequence[Sequence[float]] | Floats


def seed_effects(matrix: Matrix) -> Floats:
    """Each seed's (row's) mean difference over the envs it has a cell for (NaN: no cell)."""
    cells = _matrix(matrix)
    present = ~np.isnan(cells)
    return np.asarray(np.where(present, cells, 0.0).sum(axis=1) / present.sum(axis=1))


def sign_flip_test(
    differences: Sequence[float] | Floats,
    alternative: Alternative = "two-sided",
    *,
    resamples: int = FLIP_RESAMPLES,
    seed: int = 0,
) -> float:
    """p-value of "the mean per-seed difference is 0" against `alternative`, by flipping signs.

    Under no effect each seed's difference is as likely to have come out with either sign, so
    the observed mean is compared with the means of all 2^n sign flips
    (`scipy.stats.permutation_test`, `permutation_type="samples"`): exact for n ≤
    `EXACT_MAX_SEEDS`, else `resamples` random flips (seeded, p counted with +1s). "greater"
    asks whether the differences are above 0. The smallest p n seeds can give is
    `min_attainable_p`: 1/2^n one-sided, 2/2^n two-sided (5 seeds: 0.0625, which cannot
    reach 0.05; 6 seeds: 0.03125).
    """
    diffs = finite_array(differences, "per-seed differences")
    _check_alternative(alternative)
    if diffs.size < 2:
        raise ValueError(f"a sign-flip test needs at least 2 seeds, got {diffs.size}")
    exact = diffs.size <= EXACT_MAX_SEEDS
    result = scipy.stats.permutation_test(
        (diffs,),
        np.mean,
        permutation_type="samples",
        vectorized=True,
        n_resamples=2**diffs.size if exact else resamples,
        batch=max(1, _FLIP_CELLS // diffs.size),
        alternative=alternative,
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def cluster_bootstrap_ci(
    matrix: Matrix,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, float, float]:
    """(mean, lo, hi) of the mean cell of a seeds × envs matrix of differences.

    A two-way bootstrap: each resample draws seeds (rows) and envs (columns) with replacement,
    independently (`scipy.stats.bootstrap` on the row and column indices, `paired=False`), and
    averages the drawn sub-matrix; the interval is its percentile interval.

    NaN marks a missing cell (a seed with no episodes on an env): the mean is over the cells
    present, in the data and in each resample (a present cell counts once per time its seed and
    its env are drawn). A resample that draws only missing cells has no mean and is left out,
    so with missing cells the interval is conditional on a resample having data. A seed or an
    env with no cell at all is an error (drop it: it carries no evidence). Equal cells give a
    zero-width interval.
    """
    cells = _matrix(matrix)
    present = ~np.isnan(cells)
    values = cells[present]
    if np.all(values == values[0]):
        return float(values[0]), float(values[0]), float(values[0])
    mean = float(values.mean())
    filled = np.where(present, cells, 0.0)

    def sub_matrix_mean(rows: Floats, columns: Floats, axis: int = -1) -> Floats:
        pick = (rows[..., :, None], columns[..., None, :])
        count = present[pick].sum(axis=(-2, -1))
        total = filled[pick].sum(axis=(-2, -1))
        return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)

    indices = (np.arange(cells.shape[0]), np.arange(cells.shape[1]))
    with warnings.catch_warnings():
        # scipy warns when its own interval is NaN, which resamples without data make it here.
        warnings.simplefilter("ignore", scipy.stats.DegenerateDataWarning)
        means = bootstrap_distribution(
            indices, sub_matrix_mean, resamples, seed, cells_per_resample=cells.size
        )
    lo, hi = percentile_interval(means[~np.isnan(means)], level)
    return mean, min(lo, mean), max(hi, mean)


def min_attainable_p(n_seeds: int, alternative: Alternative = "two-sided") -> float:
    """The smallest p-value the exact sign-flip test can give on `n_seeds` seeds (all of them
    moving the same way): 1/2^n one-sided, 2/2^n two-sided."""
    _check_alternative(alternative)
    if n_seeds < 1:
        raise ValueError(f"need at least 1 seed, got {n_seeds}")
    flips = 2.0**n_seeds
    return min(1.0, (2 if alternative == "two-sided" else 1) / flips)


def minimum_detectable_effect(
    sd_between_seeds: float,
    n_seeds: int,
    alpha: float = ALPHA,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
) -> float:
    """The smallest mean per-seed difference the design detects with `power` at level `alpha`.

    The paired t approximation: (t_{1-α/2} + t_{power}) · sd / √n on n − 1 degrees of freedom
    (t_{1-α} one-sided), where `sd_between_seeds` is the standard deviation of the per-seed
    differences (from a pilot, or the runs themselves). The sign-flip test is a little less
    powerful than the t-test at few seeds, so read it as a lower bound. When the sign-flip test
    cannot reach p < alpha at all on `n_seeds` seeds (`min_attainable_p` ≥ alpha: two-sided at 5
    seeds or fewer for α = 0.05), no effect is detectable and this returns infinity.
    """
    _check_alternative(alternative)
    if n_seeds < 2:
        raise ValueError(f"need at least 2 seeds to estimate a detectable effect, got {n_seeds}")
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError(f"alpha and power must be in (0, 1), got {alpha} and {power}")
    if not (math.isfinite(sd_between_seeds) and sd_between_seeds >= 0):
        raise ValueError(f"sd_between_seeds must be a finite number ≥ 0, got {sd_between_seeds}")
    if min_attainable_p(n_seeds, alternative) >= alpha:
        return math.inf
    tail = alpha / 2 if alternative == "two-sided" else alpha
    df = n_seeds - 1
    t_sum = scipy.stats.t.ppf(1 - tail, df) + scipy.stats.t.ppf(power, df)
    return float(t_sum * sd_between_seeds / math.sqrt(n_seeds))


def _matrix(matrix: Matrix) -> Floats:
    cells = np.asarray(matrix, dtype=np.float64)
    if cells.ndim != 2 or cells.size == 0:
        raise ValueError(f"need a non-empty seeds × envs matrix, got shape {cells.shape}")
    if np.any(np.isinf(cells)):
        raise ValueError("the matrix contains infinity (NaN marks a missing cell)")
    present = ~np.isnan(cells)
    for axis, what in ((1, "seed (row)"), (0, "env (column)")):
        empty = np.flatnonzero(~present.any(axis=axis))
        if empty.size:
            raise ValueError(
                f"{what} {', '.join(map(str, empty))} has no cell (all NaN): drop it, it "
                "carries no evidence"
            )
    return cells


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}"
        )
