"""The verdict: the pre-registered test on the committed artifacts, as `verdict.md`.

The training run is the unit. For a comparison `a − b` each seed gives one effect (the mean
over the shared evaluation samples of a's value minus b's); the test is the exact sign-flip
permutation test over those effects, the CI a bootstrap that resamples seeds and envs, and
the design's sensitivity is the minimum detectable effect at the seeds run. The first
comparison on the primary metric is the test the plan registered; everything else is
reported as exploratory.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean, stdev

import numpy as np

from spade.evals.seed_stats import (
    cluster_bootstrap_ci,
    min_attainable_p,
    minimum_detectable_effect,
    sign_flip_test,
)
from spade.evals.stats import paired_delta
from spade.experiments.budget import estimates, summary
from spade.experiments.plan import Comparison, Deviation, MetricRef, Plan
from spade.experiments.records import Experiment, Scores, env_of
from spade.experiments.units import Unit

VERDICT_FILE = "verdict.md"


@dataclass(frozen=True)
class Effect:
    """`a − b` on one metric over the seeds both arms have."""

    comparison: Comparison
    metric: MetricRef
    seeds: list[int | None]
    """The training seeds both arms have (None: two checkpoint arms, evaluated once)."""
    per_seed: list[tuple[float, float, float]]
    """(a's mean, b's mean, a − b) per seed, in `seeds` order."""
    mean: float
    lo: float
    hi: float
    p_value: float
    test: str
    """How `p_value` was computed."""

    @property
    def differences(self) -> list[float]:
        return [d for _, _, d in self.per_seed]


def _checkpoint_seeds(plan: Plan) -> list[int | None]:
    """Where two checkpoint arms are compared: the registered warm start (None), and where its
    evaluation is missing (lost with its weights), the first rebuild's, named by its seed."""
    return [None, *sorted(s for s in plan.seeds if plan.rebuild_of(s) is not None)]


def effect(experiment: Experiment, comparison: Comparison, metric: MetricRef) -> Effect | None:
    """The comparison on one metric; None when no seed has both arms evaluated. Between two
    checkpoint arms (no training run involved) the samples are the unit: one row, with the
    paired per-sample test of `spade.evals.stats.paired_delta`."""
    plan = experiment.plan
    trained = plan.arms[comparison.a].trained or plan.arms[comparison.b].trained
    seeds = list(plan.seeds) if trained else _checkpoint_seeds(plan)
    kept: list[int | None] = []
    per_seed, cells, pairs = [], [], []
    for seed in seeds:
        a = experiment.scores(comparison.a, seed, metric)
        b = experiment.scores(comparison.b, seed, metric)
        common = [i for i in a or {} if i in (b or {})]
        if not a or not b or not common:
            continue
        kept.append(seed)
        env_a, env_b = _by_env(a, common), _by_env(b, common)
        mean_a, mean_b = fmean(env_a.values()), fmean(env_b.values())
        per_seed.append((mean_a, mean_b, mean_a - mean_b))
        cells.append({env: env_a[env] - env_b[env] for env in env_a})
        pairs.append((a, b))
        if not trained:
            break
    if not kept:
        return None
    differences = [d for _, _, d in per_seed]
    if not trained:
        a, b = pairs[0]
        delta = paired_delta(b, a)
        return Effect(
            comparison,
            metric,
            kept,
            per_seed,
            delta.delta,
            delta.lo,
            delta.hi,
            delta.p_value,
            f"per-sample {delta.method}, two-sided"
            + ("" if kept[0] is None else f"; the warm start as rebuilt for seed {kept[0]}"),
        )
    mean, lo, hi = cluster_bootstrap_ci(_matrix(cells), resamples=plan.test.resamples, seed=0)
    if len(kept) < 2:
        p_value, test = math.nan, "one seed: no test over seeds"
    else:
        p_value = sign_flip_test(differences, comparison.alternative)
        test = f"sign-flip over seeds, {comparison.alternative}"
    return Effect(comparison, metric, kept, per_seed, mean, lo, hi, p_value, test)


def _by_env(scores: Scores, common: list[str]) -> dict[str, float]:
    """Each env's mean over the shared samples: envs weigh equally, as in the bootstrap."""
    groups: dict[str, list[float]] = defaultdict(list)
    for sample_id in common:
        groups[env_of(sample_id)].append(scores[sample_id])
    return {env: fmean(values) for env, values in sorted(groups.items())}


def _matrix(cells: list[dict[str, float]]) -> np.ndarray:
    """Seeds × envs of mean differences (NaN where a seed has no sample of an env)."""
    envs = sorted({env for row in cells for env in row})
    return np.array([[row.get(env, math.nan) for env in envs] for row in cells], dtype=float)


def render(experiment: Experiment) -> str:
    """verdict.md, from the committed artifacts alone (deterministic)."""
    plan = experiment.plan
    lines = [f"# Verdict: {plan.name}", "", plan.question.strip(), ""]
    lines += [
        f"Registered {plan.registered.isoformat()} in [`plan.yaml`](plan.yaml); "
        "this file and the figures are generated from `units/` by "
        f"`spade-experiment verdict experiments/{plan.name}`.",
        "",
    ]
    lines += _status(experiment)
    primary = effect(experiment, plan.test.comparisons[0], plan.evaluation.primary)
    lines += _test_section(experiment, primary)
    lines += _per_seed_section(experiment)
    lines += _secondary_section(experiment)
    lines += _budget_section(experiment)
    lines += _deviations(experiment)
    lines += [
        "## Figures",
        "",
        "![training curves per arm](curves.svg)",
        "",
        "![effect per seed](effects.svg)",
        "",
    ]
    return "\n".join(lines).rstrip() + "\n"


def _status(experiment: Experiment) -> list[str]:
    done, missing = experiment.done(), experiment.missing()
    total = len(done) + len(missing)
    if not missing:
        return [f"**Status: complete** ({total} of {total} units).", ""]
    names = ", ".join(u.name for u in missing[:12]) + (" ..." if len(missing) > 12 else "")
    return [
        f"**Status: interim look** ({len(done)} of {total} units done). Not run yet: "
        f"{names}. An interim look decides nothing: the test below is the registered "
        "one only once every seed of its two arms is in. Budget (`spade-experiment status`): "
        f"{summary(estimates(experiment))}.",
        "",
    ]


def _test_section(experiment: Experiment, primary: Effect | None) -> list[str]:
    plan = experiment.plan
    first = plan.test.comparisons[0]
    lines = [
        "## The pre-registered test",
        "",
        f"- Primary metric: {plan.evaluation.primary.label}.",
        f"- Comparison: {first.label}, alternative `{first.alternative}`, "
        f"α = {plan.test.alpha}, exact sign-flip permutation test over training seeds "
        f"(the run is the unit); 95% CI from a bootstrap resampling seeds and envs "
        f"({plan.test.resamples} resamples).",
        f"- Seeds planned: {', '.join(map(str, plan.seeds))}.",
        "",
    ]
    if primary is None:
        return [*lines, "No seed has both arms evaluated yet.", ""]
    n = len(primary.seeds)
    headline = (
        f"**{first.label} = {primary.mean:+.3f}** [{primary.lo:+.3f}, {primary.hi:+.3f}] "
        f"over {n} seed(s)"
    )
    floor = _at_floor(primary)
    if n < 2:
        return [
            *lines,
            f"{headline}; one seed gives no test and no between-seed spread.",
            *floor,
            "",
        ]
    decision = "rejects" if primary.p_value < plan.test.alpha else "does not reject"
    lines += [
        f"{headline}; p = {primary.p_value:.3f}: the test {decision} "
        f'"no difference" at α = {plan.test.alpha}.',
        "",
    ]
    smallest = min_attainable_p(n, first.alternative)
    reachable = smallest < plan.test.alpha
    lines.append(
        f"- The smallest p-value {n} seeds can give is {smallest:.3f}"
        + ("." if reachable else " (not below α: this many seeds cannot reach significance).")
    )
    spread = stdev(primary.differences)
    mde = minimum_detectable_effect(spread, n, plan.test.alpha, plan.test.power, first.alternative)
    lines.append(
        f"- Between-seed SD of the effect: {spread:.3f}; the minimum detectable effect at "
        f"{n} seeds (power {plan.test.power}, α {plan.test.alpha}): "
        + (f"{mde:.3f}." if math.isfinite(mde) else "none (see above).")
    )
    return [*lines, *floor, ""]


def _at_floor(primary: Effect) -> list[str]:
    """A note when both arms score 0 at every seed: no number of seeds can then show a
    difference on the primary metric, and a reader should know it before reading p."""
    if any(a or b for a, b, _ in primary.per_seed):
        return []
    return [
        "",
        "- Both arms score 0 on the primary metric at every seed evaluated: it sits at its "
        "floor, where no number of seeds can show a difference; only the secondary metrics "
        "(exploratory) can move.",
    ]


def _per_seed_section(experiment: Experiment) -> list[str]:
    plan = experiment.plan
    lines = ["## Effect per seed (primary metric)", ""]
    for comparison in plan.test.comparisons:
        found = effect(experiment, comparison, plan.evaluation.primary)
        if found is None:
            lines += [f"{comparison.label}: no seed evaluated on both arms yet.", ""]
            continue
        lines += [
            f"{comparison.label}:",
            "",
            f"| seed | {comparison.a} | {comparison.b} | Δ |",
            "|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {'—' if seed is None else seed} | {a:.3f} | {b:.3f} | {d:+.3f} |"
            for seed, (a, b, d) in zip(found.seeds, found.per_seed, strict=True)
        ]
        lines += [
            "",
            f"mean {found.mean:+.3f} [{found.lo:+.3f}, {found.hi:+.3f}], "
            f"p = {_p(found.p_value)} ({found.test})",
            "",
        ]
    return lines


def _secondary_section(experiment: Experiment) -> list[str]:
    plan = experiment.plan
    lines = [
        "## Secondary metrics (exploratory: no correction for the many looks)",
        "",
        "| metric | comparison | seeds | Δ | 95% CI | p | test |",
        "|---|---|---:|---:|---|---:|---|",
    ]
    for metric in plan.evaluation.secondary:
        for comparison in plan.test.comparisons:
            found = effect(experiment, comparison, metric)
            if found is None:
                lines.append(f"| {metric.label} | {comparison.label} | 0 | — | — | — | — |")
                continue
            lines.append(
                f"| {metric.label} | {comparison.label} | {len(found.seeds)} | "
                f"{found.mean:+.3f} | [{found.lo:+.3f}, {found.hi:+.3f}] | "
                f"{_p(found.p_value)} | {found.test} |"
            )
    return [*lines, ""]


BUDGET = (
    ("iterations", None),
    ("agent episodes", "agent/episodes"),
    ("agent samples", "samples/agent"),
    ("with gradient", "update/agent/with_gradient"),
    ("agent tokens", "update/agent/tokens"),
    ("designer samples", "samples/designer"),
    ("optimizer steps", "update/optimizer_steps"),
)
"""What each arm's training spent, summed over its iterations (the plan matches these)."""


def _budget_section(experiment: Experiment) -> list[str]:
    plan = experiment.plan
    head = " | ".join(title for title, _ in BUDGET)
    lines = [
        "## Budget per training run",
        "",
        f"| arm | seed | {head} | wall time |",
        "|---|---:|" + "---:|" * (len(BUDGET) + 1),
    ]
    for arm in experiment.trained_arms():
        for seed in plan.seeds:
            records = experiment.metrics(arm, seed)
            if not records:
                continue
            cells = [
                str(len(records)) if key is None else _total(records, key) for _, key in BUDGET
            ]
            unit = experiment.unit_record(Unit("train", arm, seed)) or {}
            seconds = unit.get("seconds")
            wall = f"{seconds / 60:.1f} min" if isinstance(seconds, int | float) else "—"
            lines.append(f"| {arm} | {seed} | {' | '.join(cells)} | {wall} |")
    return [*lines, ""]


def _total(records: list[dict[str, object]], key: str) -> str:
    values = [v for r in records if isinstance(v := r.get(key), int | float) and math.isfinite(v)]
    return f"{sum(values):.0f}" if values else "—"


def _deviations(experiment: Experiment) -> list[str]:
    deviations = experiment.plan.deviations
    lines = ["## Deviations from the plan", ""]
    if not deviations:
        return [*lines, "None.", ""]
    return [*lines, *(_deviation(d) for d in deviations), ""]


def _deviation(deviation: Deviation) -> str:
    line = f"- {deviation.date.isoformat()}: {deviation.what}"
    if deviation.drops:
        line += f" Units left out: {', '.join(deviation.drops)}."
    rebuild = deviation.warm_rebuild
    if rebuild is not None:
        seeds = ", ".join(map(str, rebuild.seeds))
        line += (
            f" Seeds {seeds} train from the warm start rebuilt in `{rebuild.run_dir}`, each "
            "recording the rebuild it used (`warm/seedK/build`) and its evaluation."
        )
    return line


def _p(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3f}"
