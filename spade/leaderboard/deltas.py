"""Per-benchmark deltas between two rows, and the table `spade-eval --baseline` prints."""

from __future__ import annotations

from tabulate import tabulate

from spade.evals.stats import Delta, common_ids, paired_delta, summary_delta, unpaired_delta
from spade.leaderboard.row import Row, as_row
from spade.leaderboard.run import RunResults

ALPHA = 0.05
SIGNIFICANT = "*"
METHOD_NAMES = {
    "mcnemar": "McNemar exact",
    "paired_bootstrap": "paired bootstrap",
    "unpaired_bootstrap": "unpaired bootstrap",
    "normal_from_ci": "normal, from CIs",
}
MISSING = "—"


def row_delta(
    baseline: Row, current: Row, benchmark: str, seed: int = 0, metric: str | None = None
) -> Delta | None:
    """`current - baseline` on one benchmark; None when either row lacks it.

    Paired over shared sample ids when both rows kept samples (the strongest test: per-sample
    noise cancels); unpaired when they share no id; from the summary CIs when either kept none.
    With `metric` (other than the benchmark's primary): on the samples' values of that metric,
    which only per-sample values give (None when either row lacks them).
    """
    before, after = baseline.benchmarks.get(benchmark), current.benchmarks.get(benchmark)
    if before is None or after is None:
        return None
    if metric is not None and metric != before.primary:
        scores_before = metric_values(baseline, benchmark, metric)
        scores_after = metric_values(current, benchmark, metric)
        if not (scores_before and scores_after):
            return None
        return _sample_delta(scores_before, scores_after, seed)
    primary_before, primary_after = baseline.samples.get(benchmark), current.samples.get(benchmark)
    if primary_before and primary_after:
        return _sample_delta(primary_before, primary_after, seed)
    return summary_delta(before.value, before.ci95, after.value, after.ci95)


def metric_values(row: Row, benchmark: str, metric: str) -> dict[str, float]:
    """`{sample_id: value}` of `metric` on `benchmark` (its primary: the sample scores)."""
    score = row.benchmarks.get(benchmark)
    if score is not None and metric == score.primary:
        return row.samples.get(benchmark, {})
    return row.sample_metrics.get(benchmark, {}).get(metric, {})


def _sample_delta(before: dict[str, float], after: dict[str, float], seed: int) -> Delta:
    if common_ids(before, after):
        return paired_delta(before, after, seed=seed)
    return unpaired_delta(list(before.values()), list(after.values()), seed=seed)


def benchmark_names(*rows: Row) -> list[str]:
    """Benchmarks of all rows, in order of first appearance."""
    return list(dict.fromkeys(name for row in rows for name in row.benchmarks))


def format_delta(delta: Delta, alpha: float = ALPHA) -> str:
    """`+0.012*`: signed, marked when significant at `alpha`."""
    return f"{delta.delta:+.3f}{SIGNIFICANT if delta.significant(alpha) else ''}"


def format_ci(delta: Delta) -> str:
    return f"[{delta.lo:+.3f}, {delta.hi:+.3f}]"


def deltas_table(
    current: RunResults | Row, baseline: Row, alpha: float = ALPHA, metric: str | None = None
) -> str:
    """A GitHub-style table of each benchmark's delta against `baseline`, with a footnote.

    Δ is `current - baseline`, on shared samples when both kept them (n counts those);
    `*` marks p < alpha. Benchmarks on one side only, or that measured something else (version,
    metric, generation settings, options), say so. With `metric`, values and deltas are that
    metric's (the mean of its per-sample values where it is not the primary).
    """
    row = as_row(current)
    table = []
    for name in benchmark_names(baseline, row):
        before, after = baseline.benchmarks.get(name), row.benchmarks.get(name)
        delta = row_delta(baseline, row, name, metric=metric)
        cells = [name, _value(baseline, name, metric), _value(row, name, metric)]
        if delta is None:
            cells += [MISSING] * 5
        else:
            n = str(delta.n_common) if delta.n_common else MISSING
            test = METHOD_NAMES.get(delta.method, delta.method)
            cells += [format_delta(delta, alpha), format_ci(delta), n, _p(delta.p_value), test]
        note = _note(before is None, after is None, baseline, row, name)
        if not note and delta is None:
            note = f"no per-sample {metric} on both sides"
        table.append([*cells, note])
    headers = ["benchmark", baseline.label, row.label, "Δ", "95% CI", "n", "p", "test", "note"]
    text = tabulate(table, headers=headers, tablefmt="github", disable_numparse=True)
    on = "" if metric is None else f" on each sample's {metric}"
    return f"{text}\n{SIGNIFICANT} p < {alpha:g}; Δ = {row.label} − {baseline.label}{on}"


def _value(row: Row, benchmark: str, metric: str | None) -> str:
    score = row.benchmarks.get(benchmark)
    if score is None:
        return MISSING
    if metric is None or metric == score.primary:
        return f"{score.value:.3f}"
    values = metric_values(row, benchmark, metric)
    return f"{sum(values.values()) / len(values):.3f}" if values else MISSING


def _note(no_before: bool, no_after: bool, baseline: Row, current: Row, name: str) -> str:
    if no_before:
        return "not in baseline"
    if no_after:
        return "not in this run"
    reason = baseline.benchmarks[name].not_comparable_with(current.benchmarks[name])
    return f"{reason}: not comparable" if reason else ""


def _p(p_value: float) -> str:
    return "<0.001" if p_value < 0.001 else f"{p_value:.3f}"
