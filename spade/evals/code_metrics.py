"""pass@k for code benchmarks: the unbiased estimator of Chen et al. (2021), HumanEval paper.

With n samples of which c pass, pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least
one of k samples drawn without replacement from the n passes. Plain c/n or 1-(1-c/n)^k
are biased for k > 1.
"""

from __future__ import annotations

from math import comb


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate from `n` samples with `c` correct (needs 1 ≤ k ≤ n)."""
    if not 0 <= c <= n:
        raise ValueError(f"correct samples c={c} must lie in [0, n={n}]")
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must lie in [1, n={n}]")
    if n - c < k:  # every draw of k holds at least one correct sample
        return 1.0
    # Exact integers: the float product form loses precision for large n.
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_at_k_metrics(n: int, c: int) -> dict[str, float]:
    """`pass@k` for every k from 1 to n; pass@1 is c/n."""
    return {f"pass@{k}": pass_at_k(n, c, k) for k in range(1, n + 1)}
