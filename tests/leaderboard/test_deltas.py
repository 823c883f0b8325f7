"""The table `spade-eval --baseline` prints."""

from spade.leaderboard import Row, deltas_table
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


def _returns(n: int, value: float, raised: int = 0, by: float = 0.0) -> dict[str, float]:
    """`n` episodes' returns, all `value`, the first `raised` of them `by` higher."""
    return {str(i): value + (by if i < raised else 0.0) for i in range(n)}


def test_a_metric_delta_pairs_each_samples_value_not_the_primary() -> None:
    # Same successes on both sides, but partial credit up on 30 of 40 episodes: the primary
    # shows nothing, the return delta is +0.075, significant, paired on all 40.
    flat = binary_scores(40, 4)
    before = row("fixed", {"suite": flat}, metrics={"suite": {"return": _returns(40, 0.1)}})
    after = row("spade", {"suite": flat},
                metrics={"suite": {"return": _returns(40, 0.1, raised=30, by=0.1)}})  # fmt: skip
    assert "+0.000 " in _line(deltas_table(after, before), "suite")
    table = deltas_table(after, before, metric="return")
    line = _line(table, "suite")
    assert [cell.strip() for cell in line.split("|")[2:4]] == ["0.100", "0.175"]
    assert "+0.075*" in line and "| 40 " in line and "paired bootstrap" in line
    assert table.endswith("Δ = spade − fixed on each sample's return")


def test_a_metric_only_one_side_kept_per_sample_says_so() -> None:
    scores = binary_scores(20, 5)
    before = row("old", {"suite": scores, "gsm8k": scores})  # stored before returns were kept
    after = row("new", {"suite": scores, "gsm8k": scores},
                metrics={"suite": {"return": _returns(20, 0.3)}})  # fmt: skip
    line = _line(deltas_table(after, before, metric="return"), "suite")
    cells = [cell.strip() for cell in line.split("|")[1:-1]]
    assert cells[2] == "0.300" and cells[3:8] == ["—"] * 5  # no delta, CI, n, p or test
    assert cells[-1] == "no per-sample return on both sides"
    # The primary's own name gives the usual primary delta.
    assert "McNemar exact" in _line(deltas_table(after, before, metric="accuracy"), "gsm8k")


def test_rows_keep_reported_non_slice_metrics_and_load_them_back() -> None:
    scores = binary_scores(6, 3)
    returns = _returns(6, 0.25)
    partial = {"0": 1.0, "1": 0.0}  # only some samples carry it: not kept
    stored = row("r", {"suite": scores}, metrics={"suite": {
        "return": returns, "return[kind=game]": returns, "turns": partial}})  # fmt: skip
    assert stored.sample_metrics == {"suite": {"return": returns}}
    assert Row.from_json(stored.to_json()) == stored
