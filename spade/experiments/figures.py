"""The experiment's figures, as SVG files that regenerate byte for byte.

`curves.svg`: the plan's training curves, one panel a metric, one colour an arm, a thin line
per seed and a thick one for the mean over seeds. `effects.svg`: each comparison's effect per
seed on the primary metric, with its mean and CI.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from statistics import fmean
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from spade.atomic import write_atomic  # noqa: E402
from spade.experiments.records import Experiment  # noqa: E402
from spade.experiments.verdict import effect  # noqa: E402

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
SVG_SETTINGS: dict[str, Any] = {"svg.hashsalt": "spade-experiment", "svg.fonttype": "none"}
"""A fixed salt for the ids matplotlib writes, and text as text (not glyph paths): the same
figure is then the same bytes on any machine with this matplotlib."""


def write_figures(experiment: Experiment, out: Path) -> list[Path]:
    paths = [out / "curves.svg", out / "effects.svg"]
    with matplotlib.rc_context(SVG_SETTINGS):  # type: ignore[arg-type]
        write_atomic(paths[0], _svg(_curves(experiment)))
        write_atomic(paths[1], _svg(_effects(experiment)))
    return paths


def _svg(figure: plt.Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(figure)
    return buffer.getvalue()


def _curves(experiment: Experiment) -> plt.Figure:
    keys = experiment.plan.curves
    figure, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 3.2), squeeze=False)
    for axis, key in zip(axes[0], keys, strict=True):
        for colour, arm in zip(COLOURS, experiment.trained_arms(), strict=False):
            runs = [_series(experiment.metrics(arm, seed), key) for seed in experiment.plan.seeds]
            runs = [run for run in runs if run]
            for run in runs:
                axis.plot(*zip(*run, strict=True), color=colour, alpha=0.3, linewidth=0.8)
            mean = _mean_curve(runs)
            if mean:
                axis.plot(
                    *zip(*mean, strict=True),
                    color=colour,
                    linewidth=2.2,
                    label=f"{arm} ({len(runs)} seeds)",
                )
        axis.set_title(key, fontsize=10)
        axis.set_xlabel("iteration")
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=7)
    figure.tight_layout()
    return figure


def _series(records: list[dict[str, object]], key: str) -> list[tuple[float, float]]:
    points = []
    for record in records:
        step, value = record.get("step"), record.get(key)
        if isinstance(step, int) and isinstance(value, int | float) and math.isfinite(value):
            points.append((float(step), float(value)))
    return points


def _mean_curve(runs: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    steps = sorted({step for run in runs for step, _ in run})
    by_step = [[v for run in runs for s, v in run if s == step] for step in steps]
    return [(step, fmean(values)) for step, values in zip(steps, by_step, strict=True) if values]


def _effects(experiment: Experiment) -> plt.Figure:
    plan = experiment.plan
    comparisons = plan.test.comparisons
    figure, axis = plt.subplots(figsize=(1.8 + 1.6 * len(comparisons), 3.4))
    for position, comparison in enumerate(comparisons):
        found = effect(experiment, comparison, plan.evaluation.primary)
        if found is None:
            continue
        axis.scatter(
            [position] * len(found.differences), found.differences, color="#555555", s=18, zorder=3
        )
        axis.errorbar(
            [position + 0.18],
            [found.mean],
            yerr=[[found.mean - found.lo], [found.hi - found.mean]],
            fmt="o",
            color=COLOURS[0],
            capsize=4,
        )
    axis.axhline(0.0, color="#999999", linewidth=0.8)
    axis.set_xticks(range(len(comparisons)), [c.label for c in comparisons], fontsize=8)
    axis.set_xlim(-0.6, len(comparisons) - 0.4)
    axis.set_ylabel(f"Δ {plan.evaluation.primary.metric}")
    axis.set_title(f"{plan.evaluation.primary.label}: per seed, mean and 95% CI", fontsize=9)
    figure.tight_layout()
    return figure
