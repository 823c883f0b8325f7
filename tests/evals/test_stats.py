"""Bootstrap intervals, paired deltas and McNemar's test against hand-computed values."""

import math

import numpy as np
import pytest
import scipy.stats

from spade.evals import stats
from spade.evals.stats import (
    RESAMPLES,
    bootstrap_distribution,
    mcnemar_exact,
    mean_ci,
    normal_quantile,
    paired_delta,
    standard_error,
    summary_delta,
    unpaired_delta,
)


def accuracy(n: int, correct: int) -> list[float]:
    return [1.0] * correct + [0.0] * (n - correct)


def test_mean_ci_contains_the_mean_and_shrinks_with_n() -> None:
    small = mean_ci(accuracy(20, 12))
    large = mean_ci(accuracy(2000, 1200))
    for mean, lo, hi in (small, large):
        assert mean == pytest.approx(0.6)
        assert lo < mean < hi
    assert (large[2] - large[1]) < (small[2] - small[1]) / 5  # ~√100 = 10× narrower


def test_mean_ci_matches_the_normal_approximation_for_accuracy() -> None:
    # 0.6 on 400 samples: ±1.96·√(0.24/400) ≈ ±0.048.
    mean, lo, hi = mean_ci(accuracy(400, 240))
    assert lo == pytest.approx(0.6 - 0.048, abs=0.008)
    assert hi == pytest.approx(0.6 + 0.048, abs=0.008)


def test_mean_ci_of_two_samples_is_exact() -> None:
    # Resampling [0, 1] gives means 0, ½, 1 with chances ¼, ½, ¼: the 95% interval is [0, 1].
    assert mean_ci([0.0, 1.0]) == (0.5, 0.0, 1.0)


def test_mean_ci_collapses_for_equal_scores_and_is_seeded() -> None:
    assert mean_ci([0.7] * 50) == (0.7, 0.7, 0.7)
    scores = list(np.random.default_rng(3).random(300))
    assert mean_ci(scores, seed=1) == mean_ci(scores, seed=1)
    assert mean_ci(scores, seed=1) != mean_ci(scores, seed=2)


@pytest.mark.parametrize("bad", [[], [0.5, math.nan]])
def test_mean_ci_rejects_empty_or_nan(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        mean_ci(bad)


@pytest.mark.parametrize(
    ("worse", "better", "p"),
    [
        (1, 9, 22 / 1024),  # 2·(C(10,0)+C(10,1))/2¹⁰
        (0, 6, 2 / 64),
        (5, 5, 1.0),
        (0, 0, 1.0),
        (20, 0, 2 / 2**20),
    ],
)
def test_mcnemar_exact_on_known_tables(worse: int, better: int, p: float) -> None:
    assert mcnemar_exact(worse, better) == pytest.approx(p)
    assert mcnemar_exact(better, worse) == pytest.approx(p)  # two-sided: symmetric


MCNEMAR_GRID = {
    # (worse, better): p, from the exact-integer formula used before scipy,
    # min(1, 2·Σ_{k ≤ min} C(n, k) / 2ⁿ); scipy's binomtest sums floats, so equal to ~1e-14.
    (0, 0): 1.0, (0, 1): 1.0, (0, 3): 0.25, (0, 10): 0.001953125, (0, 25): 5.960464477539063e-08,
    (0, 60): 1.734723475976807e-18, (0, 200): 1.2446030555722283e-60,
    (1, 0): 1.0, (1, 1): 1.0, (1, 3): 0.625, (1, 10): 0.01171875, (1, 25): 8.046627044677734e-07,
    (1, 60): 5.377642775528102e-17, (1, 200): 1.2570490861279506e-58,
    (2, 0): 0.5, (2, 1): 1.0, (2, 3): 1.0, (2, 10): 0.03857421875, (2, 25): 5.647540092468262e-06,
    (2, 60): 8.474124180146703e-16, (2, 200): 6.379835262863242e-57,
    (5, 0): 0.0625, (5, 1): 0.21875, (5, 3): 0.7265625, (5, 10): 0.3017578125,
    (5, 25): 0.00032491423189640045, (5, 60): 4.869560700851427e-13,
    (5, 200): 1.1455395645628988e-52,
    (10, 0): 0.001953125, (10, 1): 0.01171875, (10, 3): 0.09228515625, (10, 10): 1.0,
    (10, 25): 0.01667384780012071, (10, 60): 8.004823399455647e-10,
    (10, 200): 4.728263442876991e-47,
    (30, 0): 1.862645149230957e-09, (30, 1): 2.9802322387695312e-08,
    (30, 3): 1.4011748135089874e-06, (30, 10): 0.0022214337732293643,
    (30, 25): 0.5900533317766357, (30, 60): 0.002060265680963076,
    (30, 200): 5.04735940724544e-32,
    (6900, 7100): 0.0925930282369835, (7000, 7000): 1.0,
}  # fmt: skip


@pytest.mark.parametrize(("counts", "p"), MCNEMAR_GRID.items())
def test_mcnemar_exact_matches_the_exact_integer_formula(counts: tuple[int, int], p: float) -> None:
    worse, better = counts
    assert mcnemar_exact(worse, better) == pytest.approx(p, rel=1e-12, abs=0)
    assert mcnemar_exact(better, worse) == pytest.approx(p, rel=1e-12, abs=0)


def test_mean_ci_is_scipys_percentile_bootstrap() -> None:
    scores = np.random.default_rng(4).random(150)
    scipy_ci = scipy.stats.bootstrap(
        (scores,),
        np.mean,
        n_resamples=RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert mean_ci(scores, seed=7)[1:] == (scipy_ci.low, scipy_ci.high)


def test_batching_does_not_change_the_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    scores = (np.random.default_rng(5).random(500) < 0.3).astype(np.float64)
    whole = bootstrap_distribution((scores,), np.mean, RESAMPLES, seed=3)
    monkeypatch.setattr(stats, "_CHUNK_CELLS", 7 * scores.size)  # batches of 7 resamples
    assert np.array_equal(bootstrap_distribution((scores,), np.mean, RESAMPLES, seed=3), whole)


def test_a_single_sample_resamples_to_itself() -> None:
    # scipy needs two observations; one is passed twice, which changes nothing.
    assert mean_ci([0.25]) == (0.25, 0.25, 0.25)
    one = paired_delta({"a": 0.2}, {"a": 0.7})
    assert (one.lo, one.hi, one.n_common) == (pytest.approx(0.5), pytest.approx(0.5), 1)
    lone = unpaired_delta([0.5], [0.2, 0.4, 0.9])
    assert lone.delta == pytest.approx(0.0)
    assert 0.2 - 0.5 <= lone.lo < 0.0 < lone.hi <= 0.9 - 0.5


def test_identical_runs_have_zero_delta_and_no_significance() -> None:
    binary = {str(i): float(i % 3 == 0) for i in range(90)}
    graded = {str(i): i / 90 for i in range(90)}
    for scores, method in ((binary, "mcnemar"), (graded, "paired_bootstrap")):
        delta = paired_delta(scores, dict(scores))
        assert (delta.delta, delta.lo, delta.hi) == (0.0, 0.0, 0.0)
        assert delta.p_value == 1.0 and not delta.significant()
        assert delta.method == method and delta.n_common == 90


def test_paired_delta_of_a_real_drop_uses_mcnemar() -> None:
    before = {str(i): float(i < 60) for i in range(100)}
    after = {str(i): float(i < 40) for i in range(100)}  # 20 discordant pairs, all worse
    delta = paired_delta(before, after)
    assert delta.delta == pytest.approx(-0.2)
    assert delta.lo < -0.2 < delta.hi < 0
    assert delta.p_value == pytest.approx(2 / 2**20)
    assert delta.significant() and delta.method == "mcnemar"


def test_paired_delta_uses_only_shared_ids() -> None:
    before = {"a": 1.0, "b": 0.0, "c": 1.0}
    after = {"b": 1.0, "c": 1.0, "d": 0.0}
    delta = paired_delta(before, after)
    assert delta.n_common == 2 and delta.delta == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no sample ids in common"):
        paired_delta({"a": 1.0}, {"b": 1.0})


def test_pairing_finds_a_shift_the_unpaired_test_cannot() -> None:
    # Per-sample difficulty varies far more than the model change: only pairing removes it.
    rng = np.random.default_rng(0)
    difficulty = rng.random(200)
    before = {str(i): float(d) for i, d in enumerate(difficulty)}
    after = {str(i): float(d) + 0.02 + rng.normal(0, 0.01) for i, d in enumerate(difficulty)}
    paired = paired_delta(before, after)
    unpaired = unpaired_delta(list(before.values()), list(after.values()))
    assert paired.method == "paired_bootstrap" and paired.significant()
    assert not unpaired.significant()
    assert paired.delta == pytest.approx(unpaired.delta)
    assert (paired.hi - paired.lo) < (unpaired.hi - unpaired.lo) / 10


def test_summary_delta_from_cis() -> None:
    # SE per side 0.1/1.96; |Δ|/SE_Δ = 0.1/(√2·0.051) = 1.386 → p = 0.166.
    delta = summary_delta(0.6, (0.5, 0.7), 0.5, (0.4, 0.6))
    assert delta.delta == pytest.approx(-0.1)
    assert delta.p_value == pytest.approx(0.1658, abs=1e-3)
    assert delta.lo == pytest.approx(-0.1 - 0.1 * math.sqrt(2), abs=1e-6)
    assert delta.method == "normal_from_ci" and not delta.significant()


def test_helpers() -> None:
    assert normal_quantile(0.975) == pytest.approx(1.959964, abs=1e-6)
    assert normal_quantile(0.95) == pytest.approx(1.644854, abs=1e-6)
    assert standard_error([1.0, 0.0, 1.0, 0.0]) == pytest.approx(math.sqrt(1 / 3) / 2)
    assert standard_error([1.0]) == 0.0
