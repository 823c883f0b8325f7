"""Leaderboards made to be looked at: a Markdown page (tabulate) and a PNG chart (matplotlib).

Both are pure functions of the rows, so saving the same leaderboard twice gives the same files.
"""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING

from tabulate import tabulate

from spade.evals.stats import Delta
from spade.leaderboard.deltas import (
    ALPHA,
    MISSING,
    SIGNIFICANT,
    benchmark_names,
    format_ci,
    format_delta,
    row_delta,
)
from spade.leaderboard.row import Row

if TYPE_CHECKING:
    from matplotlib.axes import Axes

Deltas = dict[str, dict[str, Delta | None]]
"""Row label -> benchmark -> delta against the baseline row."""


def compute_deltas(rows: list[Row], baseline: Row | None) -> Deltas:
    if baseline is None:
        return {}
    names = benchmark_names(*rows)
    return {
        row.label: {name: row_delta(baseline, row, name) for name in names}
        for row in rows
        if row.label != baseline.label
    }


def render_markdown(
    title: str, rows: list[Row], baseline: Row | None, deltas: Deltas, chart: str | None = None
) -> str:
    """Scores table; then, with a baseline, the delta table; the chart; provenance."""
    names = benchmark_names(*rows)
    parts = [f"# Leaderboard: {title}", ""]
    if not rows:
        return "\n".join([*parts, "No rows yet.", ""])
    scores = [
        [row.label, row.checkpoint.get("spec", ""), *(_score(row, n) for n in names)]
        for row in rows
    ]
    parts += [
        "Primary metric per benchmark: value ± half the 95% CI (n samples).",
        "",
        _table(["label", "checkpoint", *names], scores),
        "",
    ]
    if baseline is not None and deltas:
        table = [[label, *(_delta(by_name[n]) for n in names)] for label, by_name in deltas.items()]
        parts += [
            f"## Δ vs {baseline.label}",
            "",
            f"Row − baseline on shared samples, with 95% CI; {SIGNIFICANT} marks "
            f"p < {ALPHA:g} (McNemar for 0/1 scores, else bootstrap).",
            "",
            _table(["label", *names], table),
            "",
        ]
    if chart:
        parts += [f"![scores]({chart})", ""]
    provenance = [
        [
            r.label,
            r.created,
            r.spade_version,
            (r.provenance.git_commit or "")[:12],
            r.provenance.command,
        ]
        for r in rows
    ]
    parts += [
        "## Provenance",
        "",
        _table(["label", "created", "spade", "commit", "command"], provenance),
        "",
    ]
    return "\n".join(parts)


def render_png(rows: list[Row], baseline: Row | None, deltas: Deltas) -> bytes:
    """A bar chart per benchmark: deltas vs the baseline, or absolute scores for one row."""
    # Imported here: matplotlib takes a noticeable time to import, and most `spade-eval`
    # calls never draw. The Agg canvas needs no display and leaves pyplot's state alone.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = benchmark_names(*rows)
    figure = Figure(figsize=(max(6.0, 1.2 * len(names) + 2), 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    if baseline is not None and deltas:
        series = {label: [by_name[n] for n in names] for label, by_name in deltas.items()}
        _bars(axes, names, {k: [_interval(d) for d in v] for k, v in series.items()})
        axes.axhline(0.0, color="black", linewidth=0.8)
        axes.set_ylabel(f"Δ vs {baseline.label} (95% CI)")
    elif rows:
        _bars(axes, names, {row.label: [_absolute(row, n) for n in names] for row in rows})
        axes.set_ylabel("score (95% CI)")
    else:
        axes.text(0.5, 0.5, "no rows yet", ha="center", va="center", transform=axes.transAxes)
    buffer = io.BytesIO()
    # No software/version stamp: the bytes depend only on the rows.
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


Interval = tuple[float, float, float]
"""(value, lo, hi); NaN value when there is nothing to draw."""
_NOTHING: Interval = (math.nan, math.nan, math.nan)


def _bars(axes: Axes, names: list[str], series: dict[str, list[Interval]]) -> None:
    width = 0.8 / max(1, len(series))
    for index, (label, intervals) in enumerate(series.items()):
        xs = [i + (index - (len(series) - 1) / 2) * width for i in range(len(names))]
        values = [v for v, _, _ in intervals]
        errors = [
            [0.0 if math.isnan(v) else v - lo for v, lo, _ in intervals],
            [0.0 if math.isnan(v) else hi - v for v, _, hi in intervals],
        ]
        axes.bar(xs, values, width, yerr=errors, capsize=3, label=label)
    axes.set_xticks(range(len(names)), names, rotation=30, ha="right")
    axes.legend(fontsize="small")


def _interval(delta: Delta | None) -> Interval:
    return _NOTHING if delta is None else (delta.delta, delta.lo, delta.hi)


def _absolute(row: Row, name: str) -> Interval:
    score = row.benchmarks.get(name)
    return _NOTHING if score is None else (score.value, *score.ci95)


def _score(row: Row, name: str) -> str:
    score = row.benchmarks.get(name)
    if score is None:
        return MISSING
    half = (score.ci95[1] - score.ci95[0]) / 2
    return f"{score.value:.3f} ± {half:.3f} (n={score.n})"


def _delta(delta: Delta | None) -> str:
    return MISSING if delta is None else f"{format_delta(delta)} {format_ci(delta)}"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    # A `|` in a label or command would otherwise end its cell.
    cells = [[cell.replace("|", "\\|") for cell in row] for row in rows]
    return tabulate(cells, headers=headers, tablefmt="github", disable_numparse=True)
