"""The regression gate: the drop check fails on real drops and passes on noise-sized changes;
the reproduction check lists every changed sample of a same-identity greedy run."""

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from spade.leaderboard import MAX_CHANGED_SAMPLES, compare, gate_failed, gate_report
from tests.leaderboard.runs import binary_scores, flipped, row, run

STORED = binary_scores(100, 60)
WEIGHTS = "7b387f36" * 8


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
    assert report.splitlines()[-1] == "gate: FAILED (gsm8k: dropped 0.200)"


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
    assert gsm8k.failed and "version 1.0 → 2.0: not comparable" in gsm8k.reason
    assert mbpp.failed and "missing from this run" in mbpp.reason


def test_gate_fails_a_benchmark_run_with_other_settings() -> None:
    """A preset may shorten a benchmark's budget: the same scores under another budget or
    other options measure something else, and the gate says which setting changed."""
    stored = row("ci", {"gsm8k": STORED}, options={"turns": 40})
    shorter = compare(run({"gsm8k": STORED}, max_gen_toks=32, options={"turns": 40}), stored)[0]
    assert shorter.failed and "generation changed (max_gen_toks): not comparable" in shorter.reason
    fewer = compare(run({"gsm8k": STORED}, options={"turns": 20}), stored)[0]
    assert fewer.failed and "options changed (turns)" in fewer.reason
    assert not compare(run({"gsm8k": STORED}, options={"turns": 40}), stored)[0].failed


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


def _same_model(benchmarks: Any, **kwargs: Any) -> Any:
    return run(benchmarks, weights_sha256=WEIGHTS, **kwargs)


def test_identical_greedy_rerun_reproduces_every_sample() -> None:
    stored = row("ci", {"gsm8k": STORED, "games": binary_scores(6, 0)}, weights_sha256=WEIGHTS)
    results = compare(_same_model({"gsm8k": STORED, "games": binary_scores(6, 0)}), stored)
    assert not gate_failed(results)
    report = gate_report(results)
    assert "reproduction ok: all 100 samples reproduced" in report
    assert "reproduction ok: all 6 samples reproduced" in report


def test_changed_outputs_on_a_zero_scoring_benchmark_fail_and_are_listed() -> None:
    # The drop check cannot see anything on a benchmark scoring 0; the reproduction check can.
    zeros = binary_scores(6, 0)
    stored = row("ci", {"games": zeros}, weights_sha256=WEIGHTS)
    moved = {"4": "e5 instead of e4", "5": "fold"}
    current = _same_model({"games": zeros}, outputs={"games": moved})
    (games,) = compare(current, stored)
    assert games.failed and not games.dropped and games.delta == 0.0
    report = gate_report([games])
    assert "reproduction FAILED: 2 of 6 samples changed, more than the 1 allowed" in report
    assert "    4: score 0 unchanged, output changed, same answer" in report.splitlines()
    assert report.splitlines()[-1] == "gate: FAILED (games: 2 changed samples)"


def test_one_changed_sample_is_allowed_by_default_and_still_listed() -> None:
    assert MAX_CHANGED_SAMPLES == 1
    zeros = binary_scores(6, 0)
    stored = row("ci", {"games": zeros}, weights_sha256=WEIGHTS)
    current = _same_model({"games": zeros}, outputs={"games": {"4": "e5 instead of e4"}})
    (games,) = compare(current, stored)
    assert not games.failed
    report = gate_report([games])
    assert "reproduction ok: 1 of 6 samples changed, within the 1 allowed" in report
    assert "    4: score 0 unchanged, output changed, same answer" in report.splitlines()
    assert report.splitlines()[-1] == "gate: passed"


def test_a_score_change_with_the_same_output_is_a_scorer_change() -> None:
    stored = row("ci", {"gsm8k": STORED}, weights_sha256=WEIGHTS)
    current = _same_model({"gsm8k": flipped(STORED, down=2)})
    (gsm8k,) = compare(current, stored)
    assert gsm8k.failed and not gsm8k.dropped  # 2 of 100 is far inside the drop tolerance
    assert gsm8k.reproduction is not None
    assert [c.describe() for c in gsm8k.reproduction.changed] == [
        "58: score 1 → 0, same output, same answer",
        "59: score 1 → 0, same output, same answer",
    ]


def test_an_extractor_change_moves_answers_even_where_no_score_moves() -> None:
    # A broken answer extractor on wrong answers: every score stays 0, the answers move.
    zeros = binary_scores(20, 0)
    stored = row("ci", {"gsm8k": zeros}, weights_sha256=WEIGHTS)
    first_numbers = {"gsm8k": {i: "1st number" for i in zeros}}
    (gsm8k,) = compare(_same_model({"gsm8k": zeros}, answers=first_numbers), stored)
    assert gsm8k.failed and not gsm8k.dropped
    assert gsm8k.reproduction is not None and len(gsm8k.reproduction.changed) == 20
    assert gsm8k.lines()[2] == "    0: score 0 unchanged, same output, answer changed"


def test_the_stated_allowance_is_the_limit() -> None:
    stored = row("ci", {"gsm8k": STORED}, weights_sha256=WEIGHTS)
    two_changed = _same_model({"gsm8k": flipped(STORED, down=1, up=1)})
    assert gate_failed(compare(two_changed, stored, max_changed=1))
    assert not gate_failed(compare(two_changed, stored, max_changed=2))
    stored.settings["max_changed_samples"] = {"gsm8k": 2}  # set by hand on the stored row
    (gsm8k,) = compare(two_changed, stored)
    assert not gsm8k.failed
    assert gsm8k.reproduction is not None and len(gsm8k.reproduction.changed) == 2
    assert "2 of 100 samples changed, within the 2 allowed" in gate_report([gsm8k])


def test_a_real_drop_fails_both_checks() -> None:
    stored = row("ci", {"gsm8k": STORED}, weights_sha256=WEIGHTS)
    (gsm8k,) = compare(_same_model({"gsm8k": flipped(STORED, down=20)}), stored)
    assert gsm8k.dropped and gsm8k.reproduction is not None and gsm8k.reproduction.failed
    assert gsm8k.failures() == "gsm8k: dropped 0.200 and 20 changed samples"
    assert len(gate_report([gsm8k]).splitlines()) == 1 + 1 + 20 + 1  # every sample listed


@pytest.mark.parametrize(
    ("current", "why"),
    [
        (run({"gsm8k": STORED}, weights_sha256="0" * 64), "weights_sha256 differs"),
        (run({"gsm8k": STORED}, weights_sha256=WEIGHTS, backend="vllm"), "backend differs"),
        (run({"gsm8k": STORED}, weights_sha256=WEIGHTS, temperature=0.7), "not greedy"),
        (run({"gsm8k": STORED}), "no weights hash"),
    ],
)
def test_reproduction_is_not_expected_across_identities(current: Any, why: str) -> None:
    # Both sides sample alike (the declaration's settings): only the identity differs.
    temperature = current.results["benchmarks"]["gsm8k"]["generation"]["temperature"]
    stored = row("ci", {"gsm8k": STORED}, weights_sha256=WEIGHTS, temperature=temperature)
    changed = {"gsm8k": {i: "something else" for i in STORED}}
    other = run(
        {"gsm8k": STORED},
        weights_sha256=current.results["checkpoint"]["weights_sha256"],
        backend=current.results["checkpoint"]["backend"],
        temperature=temperature,
        outputs=changed,
    )
    (gsm8k,) = compare(other, stored)
    assert not gsm8k.failed  # every output differs, but nobody promised they would not
    assert gsm8k.reproduction is not None and not gsm8k.reproduction.checked
    assert why in gate_report([gsm8k])


def test_a_stored_row_without_digests_skips_reproduction_and_says_so() -> None:
    stored = row("ci", {"gsm8k": STORED}, weights_sha256=WEIGHTS)
    old = replace(stored, outputs={})  # as rows stored before digests were kept
    (gsm8k,) = compare(_same_model({"gsm8k": STORED}), old)
    assert not gsm8k.failed
    assert "  reproduction not checked: the stored row kept no output digests" in gsm8k.lines()


def test_a_limit_run_is_compared_on_the_samples_it_ran() -> None:
    stored = row("ci", {"gsm8k": STORED}, weights_sha256=WEIGHTS)
    subset = {i: s for i, s in STORED.items() if int(i) < 30}
    (gsm8k,) = compare(_same_model({"gsm8k": subset}, limit=30), stored)
    assert not gsm8k.failed and "all 30 samples reproduced" in gate_report([gsm8k])


def test_samples_missing_from_a_run_of_the_same_slice_are_changed_samples() -> None:
    stored = row("ci", {"gsm8k": STORED}, weights_sha256=WEIGHTS)
    dropped = {i: s for i, s in STORED.items() if i not in ("7", "8")}  # a runner lost two
    (gsm8k,) = compare(_same_model({"gsm8k": dropped}), stored)
    assert gsm8k.failed and not gsm8k.dropped
    lines = gsm8k.lines()
    assert lines[1].startswith("  reproduction FAILED: 2 of 100 samples changed")
    assert lines[2:] == ["    7: missing from this run", "    8: missing from this run"]
