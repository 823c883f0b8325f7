"""The regression gate fails on real drops and passes on noise-sized changes."""

import numpy as np
import pytest

from spade.leaderboard import compare, gate_failed, gate_report
from tests.leaderboard.runs import binary_scores, flipped, row, run

STORED = binary_scores(100, 60)


def test_gate_fails_on_an_injected_drop_and_names_it() -> None:
    stored = row("ci", {"gsm8k": STORED, "math500": binary_scores(50, 20)})
    current = run({"gsm8k": flipped(STORED, down=20), "math500": binary_scores(50, 20)})
    results = compare(current, stored)
    assert gate_failed(results)
    gsm8k, math500 = results
    assert gsm8k.failed and not math500.failed
    assert gsm8k.delta == pytest.approx(-0.2)
    assert "dropped 0.200" in gsm8k.reason and "0.600 → 0.400" in gsm8k.reason
    report = gate_report(results)
    assert report.splitlines()[0].startswith("FAIL gsm8k: dropped 0.200")
    assert report.splitlines()[-1] == "gate: FAILED (gsm8k)"


@pytest.mark.parametrize(("down", "up"), [(0, 0), (2, 0), (3, 1), (4, 4), (1, 3)])
def test_gate_passes_on_noise_sized_changes(down: int, up: int) -> None:
    stored = row("ci", {"gsm8k": STORED})
    results = compare(run({"gsm8k": flipped(STORED, down=down, up=up)}), stored)
    assert not gate_failed(results), results[0].reason
    assert results[0].reason.startswith(f"{(up - down) / 100:+.3f}")
    assert gate_report(results).endswith("gate: passed")


def test_gate_passes_random_flips_and_catches_a_modest_drop() -> None:
    rng = np.random.default_rng(0)
    stored_scores = {str(i): float(s) for i, s in enumerate(rng.random(500) < 0.6)}
    stored = row("ci", {"bbh": stored_scores})
    # Nondeterministic decoding: a few percent of answers flip, as many each way on average
    # (2% of the right ones, 3% of the wrong ones).
    for _ in range(20):
        noisy = {
            i: 1.0 - s if rng.random() < (0.02 if s else 0.03) else s
            for i, s in stored_scores.items()
        }
        assert not gate_failed(compare(run({"bbh": noisy}), stored))
    worse = {i: 0.0 if s == 1.0 and rng.random() < 0.15 else s for i, s in stored_scores.items()}
    assert gate_failed(compare(run({"bbh": worse}), stored))  # ~9 points down


def test_gate_tolerance_is_the_floor_or_the_statistical_margin() -> None:
    stored = row("ci", {"gsm8k": STORED})
    unchanged = compare(run({"gsm8k": STORED}), stored, tolerance_floor=0.05)[0]
    assert unchanged.tolerance == 0.05 and not unchanged.failed
    # 3 down, 1 up: SE of the paired difference ≈ 0.02, margin 1.645·SE > floor 0.
    noisy = compare(run({"gsm8k": flipped(STORED, down=3, up=1)}), stored, tolerance_floor=0.0)[0]
    assert noisy.tolerance is not None and 0.03 < noisy.tolerance < 0.035
    assert not noisy.failed


def test_stored_tolerance_overrides_the_floor() -> None:
    stored = row("ci", {"gsm8k": STORED})
    stored.settings["tolerances"] = {"gsm8k": 0.25}
    result = compare(run({"gsm8k": flipped(STORED, down=20)}), stored)[0]
    assert not result.failed and result.tolerance == 0.25


def test_gate_fails_missing_or_changed_benchmarks() -> None:
    stored = row("ci", {"gsm8k": STORED, "mbpp": STORED})
    current = run({"gsm8k": STORED}, versions={"gsm8k": "2.0"})
    gsm8k, mbpp = compare(current, stored)
    assert gsm8k.failed and "version changed 1.0 → 2.0" in gsm8k.reason
    assert mbpp.failed and "missing from this run" in mbpp.reason


def test_gate_without_per_sample_scores_uses_the_cis() -> None:
    stored = row("ci", {"gsm8k": STORED}, keep_samples=False)
    dropped = compare(run({"gsm8k": flipped(STORED, down=30)}, keep_samples=False), stored)[0]
    assert dropped.failed and "from CIs" in dropped.reason
    same = compare(run({"gsm8k": flipped(STORED, down=2)}, keep_samples=False), stored)[0]
    assert not same.failed


def test_gate_compares_only_the_samples_both_runs_scored() -> None:
    # A --limit run scores a subset of the stored samples: compare on that subset only.
    stored = row("ci", {"gsm8k": STORED})
    subset = {i: s for i, s in STORED.items() if int(i) % 2 == 0}
    result = compare(run({"gsm8k": subset}), stored)[0]
    assert result.delta == 0.0 and not result.failed and "paired on 50 samples" in result.reason
