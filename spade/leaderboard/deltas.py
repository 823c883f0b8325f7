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


def row_delta(baseline: Row, current: Row, benchmark: str, seed: int = 0) -> Delta | None:
    """`current - baseline` on one benchmark; None when either row lacks it.

    Paired over shared sample ids when both rows kept samples (the strongest test: per-sample
    noise cancels); unpaired when they share no id; from the summary CIs when either kept none.
    """
    before, after = baseline.benchmarks.get(benchmark), current.benchmarks.get(benchmark)
    if before is None or after is None:
        return None
    scores_before, scores_after = baseline.samples.get(benchmark), current.samples.get(benchmark)
    if scores_before and scores_after:
        if common_ids(scores_before, scores_after):
            return paired_delta(scores_before, scores_after, seed=seed)
        return unpaired_delta(list(scores_before.values()), list(scores_after.values()), seed=seed)
    return summary_delta(before.value, before.ci95, after.value, after.ci95)


def benchmark_names(*rows: Row) -> list[str]:
    """Benchmarks of all rows, in order of first appearance."""
    return list(dict.fromkeys(name for row in rows for name in row.benchmarks))


def format_delta(delta: Delta, alpha: float = ALPHA) -> str:
    """`+0.012*`: signed, marked when significant at `alpha`."""
    return f"{delta.delta:+.3f}{SIGNIFICANT if delta.significant(alpha) else ''}"


def format_ci(delta: Delta) -> str:
    return f"[{delta.lo:+.3f}, {delta.hi:+.3f}]"


def deltas_table(current: RunResults | Row, baseline: Row, alpha: float = ALPHA) -> str:
    """A GitHub-style table of each benchmark's delta against `baseline`, with a footnote.

    Δ is `current - baseline`, on shared samples when both kept them (n counts those);
    `*` marks p < alpha. Benchmarks on one side only, or that measured something else (version,
    metric, generation settings, options), say so.
    """
    row = as_row(current)
    table = []
    for name in benchmark_names(baseline, row):
        before, after = baseline.benchmarks.get(name), row.benchmarks.get(name)
        delta = row_delta(baseline, row, name)
        cells = [
            name,
            MISSING if before is None else f"{before.value:.3f}",
            MISSING if after is None else f"{after.value:.3f}",
        ]
        if delta is None:
            cells += [MISSING] * 5
        else:
            n = str(delta.n_common) if delta.n_common else MISSING
            test = METHOD_NAMES.get(delta.method, delta.method)
            cells += [format_delta(delta, alpha), format_ci(delta), n, _p(delta.p_value), test]
        table.append([*cells, _note(before is None, after is None, baseline, row, name)])
    headers = ["benchmark", baseline.label, row.label, "Δ", "95% CI", "n", "p", "test", "note"]
    text = tabulate(table, headers=headers, tablefmt="github", disable_numparse=True)
    return f"{text}\n{SIGNIFICANT} p < {alpha:g}; Δ = {row.label} − {baseline.label}"


def _note(no_before: bool, no_after: bool, baseline: Row, current: Row, name: str) -> str:
    if no_before:
        return "not in baseline"
    if no_after:
        return "not in this run"
    reason = baseline.benchmarks[name].not_comparable_with(current.benchmarks[name])
    return f"{reason}: not comparable" if reason else ""


def _p(p_value: float) -> str:
    return "<0.001" if p_value < 0.001 else f"{p_value:.3f}"
