"""The table `spade-eval --baseline` prints."""

from spade.leaderboard import deltas_table
from tests.leaderboard.runs import binary_scores, flipped, row, run

SCORES = binary_scores(100, 60)


def _line(table: str, benchmark: str) -> str:
    return next(line for line in table.splitlines() if line.startswith(f"| {benchmark} "))


def test_identical_run_shows_zero_delta_unmarked() -> None:
    table = deltas_table(run({"gsm8k": SCORES}), row("base", {"gsm8k": SCORES}))
    line = _line(table, "gsm8k")
    assert "+0.000 " in line and "*" not in line and "McNemar exact" in line
    assert table.splitlines()[-1].startswith("* p < 0.05")


def test_significant_drop_is_marked_with_its_ci() -> None:
    table = deltas_table(run({"gsm8k": flipped(SCORES, down=20)}), row("base", {"gsm8k": SCORES}))
    line = _line(table, "gsm8k")
    assert "-0.200*" in line and "<0.001" in line and "| 100 " in line


def test_one_sided_and_changed_benchmarks_say_so() -> None:
    baseline = row("base", {"gsm8k": SCORES, "mbpp": SCORES})
    current = run({"gsm8k": SCORES, "math500": SCORES}, versions={"gsm8k": "2.0"})
    table = deltas_table(current, baseline)
    assert "not comparable" in _line(table, "gsm8k")
    assert "not in this run" in _line(table, "mbpp")
    assert "not in baseline" in _line(table, "math500")


def test_runs_without_samples_fall_back_to_cis() -> None:
    current = run({"gsm8k": SCORES}, keep_samples=False)
    assert "normal, from CIs" in deltas_table(current, row("base", {"gsm8k": SCORES}))
