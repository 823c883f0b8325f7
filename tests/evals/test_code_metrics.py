"""pass@k against hand-computed values and the HumanEval paper's product form."""

from __future__ import annotations

import math
import random

import pytest

from spade.evals.code_metrics import pass_at_k, pass_at_k_metrics


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (1, 1, 1, 1.0),
        (1, 0, 1, 0.0),
        (5, 2, 1, 0.4),  # pass@1 is c/n
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (5, 2, 3, 1 - 1 / 10),  # 1 - C(3,3)/C(5,3)
        (5, 2, 4, 1.0),  # any 4 of 5 include a correct one
        (10, 3, 5, 1 - 21 / 252),  # 1 - C(7,5)/C(10,5)
        (10, 0, 10, 0.0),
        (10, 10, 1, 1.0),
        (200, 1, 100, 0.5),  # 1 - C(199,100)/C(200,100) = 1 - 100/200
    ],
)
def test_pass_at_k_hand_computed(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_k_matches_the_papers_stable_product_form() -> None:
    rng = random.Random(0)
    for _ in range(200):
        n = rng.randint(1, 300)
        c, k = rng.randint(0, n), rng.randint(1, n)
        product = 1.0 if n - c < k else 1.0 - math.prod(1 - k / i for i in range(n - c + 1, n + 1))
        assert pass_at_k(n, c, k) == pytest.approx(product, rel=1e-9, abs=1e-12)


def test_pass_at_k_grows_with_k() -> None:
    values = [pass_at_k(20, 3, k) for k in range(1, 21)]
    assert values == sorted(values) and values[-1] == 1.0


@pytest.mark.parametrize(("n", "c", "k"), [(5, 2, 0), (5, 2, 6), (5, 6, 1), (5, -1, 1)])
def test_pass_at_k_rejects_impossible_arguments(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_pass_at_k_metrics_lists_every_k_up_to_n() -> None:
    metrics = pass_at_k_metrics(3, 1)
    assert list(metrics) == ["pass@1", "pass@2", "pass@3"]
    assert metrics["pass@1"] == pytest.approx(1 / 3)
    assert metrics["pass@2"] == pytest.approx(2 / 3)  # 1 - C(2,2)/C(3,2)
    assert metrics["pass@3"] == 1.0
