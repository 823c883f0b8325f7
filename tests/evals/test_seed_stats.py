"""Seed-level statistics of an experiment's verdict against hand-computed values."""

import math

import numpy as np
import pytest

from spade.evals.seed_stats import (
    cluster_bootstrap_ci,
    min_attainable_p,
    minimum_detectable_effect,
    seed_effects,
    sign_flip_test,
)
from spade.evals.stats import mean_ci


def test_three_seeds_all_positive() -> None:
    # Of the 8 sign flips only the observed one has a mean as large: 1/8.
    differences = [0.1, 0.2, 0.3]
    assert sign_flip_test(differences, "greater") == pytest.approx(1 / 8)
    assert sign_flip_test(differences, "two-sided") == pytest.approx(2 / 8)
    assert sign_flip_test(differences, "less") == pytest.approx(1.0)


def test_five_seeds_cannot_reach_005_two_sided() -> None:
    differences = [0.1, 0.2, 0.3, 0.05, 0.02]
    assert sign_flip_test(differences) == pytest.approx(0.0625) == min_attainable_p(5)
    assert sign_flip_test(differences, "greater") == pytest.approx(1 / 32)


def test_sign_flip_counts_every_flip_at_least_as_large() -> None:
    # Flipping a set S of the magnitudes {.1, .2, .3, .05, .02} (sum .67) gives the sum
    # .67 − 2·ΣS; the observed sum .27 (the .2 negative) is reached when ΣS ≤ .2: {}, {.1},
    # {.2}, {.05}, {.02}, {.1,.05}, {.1,.02}, {.05,.02}, {.1,.05,.02}: 9 of 32.
    assert sign_flip_test([0.1, -0.2, 0.3, 0.05, 0.02], "greater") == pytest.approx(9 / 32)


def test_no_differences_give_p_one() -> None:
    assert sign_flip_test([0.0, 0.0, 0.0]) == 1.0


def test_many_seeds_draw_seeded_random_flips() -> None:
    differences = list(np.linspace(0.01, 0.3, 25))  # all positive: beyond every random flip
    p = sign_flip_test(differences, "greater", resamples=999)
    assert p == pytest.approx(1 / 1000)  # the +1 counts the observed statistic
    shifted = list(np.linspace(-0.1, 0.2, 25))
    assert sign_flip_test(shifted, seed=1) == sign_flip_test(shifted, seed=1)


@pytest.mark.parametrize(
    ("differences", "alternative", "message"),
    [([0.1], "two-sided", "at least 2 seeds"), ([0.1, 0.2], "bigger", "alternative must be")],
)
def test_sign_flip_rejects_bad_input(
    differences: list[float], alternative: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        sign_flip_test(differences, alternative)


def test_min_attainable_p() -> None:
    assert min_attainable_p(5, "two-sided") == 0.0625
    assert min_attainable_p(5, "greater") == min_attainable_p(5, "less") == 1 / 32
    assert min_attainable_p(6) == 1 / 32
    assert min_attainable_p(1) == 1.0


def test_constant_differences_give_a_zero_width_interval() -> None:
    assert cluster_bootstrap_ci(np.full((4, 6), 0.125)) == (0.125, 0.125, 0.125)
    with_missing = [[0.125, math.nan], [0.125, 0.125]]
    assert cluster_bootstrap_ci(with_missing) == (0.125, 0.125, 0.125)


def test_two_way_bootstrap_on_a_two_by_two_matrix() -> None:
    # Cell = seed effect a + env effect b, a, b ∈ {0, 1}. A resample's mean is mean(a*) +
    # mean(b*), each 0, ½, 1 with chances ¼, ½, ¼: the sum is 0 or 2 with chance 1/16 each,
    # more than 2.5%, so the 95% interval is [0, 2].
    assert cluster_bootstrap_ci([[0.0, 1.0], [1.0, 2.0]]) == (1.0, 0.0, 2.0)
    # Seed effects only, or env effects only: ¼ at each end, the interval [0, 1].
    assert cluster_bootstrap_ci([[0.0, 0.0], [1.0, 1.0]]) == (0.5, 0.0, 1.0)
    assert cluster_bootstrap_ci([[0.0, 1.0], [0.0, 1.0]]) == (0.5, 0.0, 1.0)


def test_env_variation_widens_the_interval_over_seeds_alone() -> None:
    rng = np.random.default_rng(0)
    seeds = 0.05 + rng.normal(0, 0.02, size=(6, 1))
    envs = rng.normal(0, 0.1, size=(1, 12))
    matrix = seeds + envs + rng.normal(0, 0.01, size=(6, 12))
    mean, lo, hi = cluster_bootstrap_ci(matrix)
    _, seed_lo, seed_hi = mean_ci(seed_effects(matrix))
    assert mean == pytest.approx(matrix.mean())
    assert lo < mean < hi
    assert hi - lo > 2 * (seed_hi - seed_lo)
    assert cluster_bootstrap_ci(matrix, seed=3) == cluster_bootstrap_ci(matrix, seed=3)


def test_missing_cells_are_left_out() -> None:
    matrix = [[1.0, math.nan], [3.0, 4.0]]
    mean, lo, hi = cluster_bootstrap_ci(matrix)
    assert mean == pytest.approx(8 / 3)
    assert 1.0 <= lo < mean < hi <= 4.0
    assert list(seed_effects(matrix)) == [1.0, 3.5]


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        ([[1.0, 2.0], [math.nan, math.nan]], r"seed \(row\) 1 has no cell"),
        ([[1.0, math.nan], [2.0, math.nan]], r"env \(column\) 1 has no cell"),
        ([1.0, 2.0], "seeds × envs matrix"),
        ([[1.0, math.inf]], "infinity"),
    ],
)
def test_cluster_bootstrap_rejects_bad_matrices(matrix: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cluster_bootstrap_ci(matrix)


def test_minimum_detectable_effect_by_hand() -> None:
    # 10 seeds, two-sided α = 0.05, power 0.8, 9 df: t_.975 = 2.262157, t_.8 = 0.883483;
    # (2.262157 + 0.883483) · 1 / √10 = 0.994714.
    assert minimum_detectable_effect(1.0, 10, 0.05) == pytest.approx(0.994714, abs=1e-6)
    # 5 seeds, one-sided, 4 df: (t_.95 = 2.131847 + t_.8 = 0.940965) · 0.1 / √5 = 0.137420.
    mde = minimum_detectable_effect(0.1, 5, 0.05, alternative="greater")
    assert mde == pytest.approx(0.137420, abs=1e-6)
    assert minimum_detectable_effect(0.1, 5, 0.05, alternative="less") == mde


def test_no_effect_is_detectable_below_the_attainable_p() -> None:
    # Two-sided, 5 seeds give p ≥ 0.0625: nothing reaches 0.05 however large.
    assert minimum_detectable_effect(0.1, 5, 0.05) == math.inf
    assert minimum_detectable_effect(0.1, 6, 0.05) < math.inf
    with pytest.raises(ValueError, match="at least 2 seeds"):
        minimum_detectable_effect(0.1, 1, 0.05)
