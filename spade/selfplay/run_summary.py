"""A training run's metrics in one table row: did every iteration update, from which roles,
how often the designer was valid, whether regret moved, what the rollouts cost.

`spade-train curves` prints it under the figure, one row per run, so two arms of one budget
compare in numbers as well as lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from spade.selfplay.run_log import curve_value, finite


@dataclass(frozen=True)
class RunSummary:
    iterations: int
    with_optimizer_step: int
    agent_gradient_iterations: int
    agent_gradient_samples: int
    designer_gradient_iterations: int | None  # None: the run designed nothing (fixed mode)
    designer_gradient_samples: int | None
    valid_designs: int | None
    candidates: int | None
    regret_nonzero: int
    regret_range: tuple[float, float] | None
    return_first_last: tuple[float, float] | None
    truncated_mean: float | None
    mismatch_range: tuple[float, float] | None
    seconds_range: tuple[float, float] | None


def _values(records: list[dict[str, Any]], key: str) -> list[float]:
    values = (curve_value(record, key) for record in records)
    return [float(v) for v in values if finite(v)]


def _span(values: list[float]) -> tuple[float, float] | None:
    return (min(values), max(values)) if values else None


def summarize(records: list[dict[str, Any]]) -> RunSummary:
    steps = _values(records, "update/optimizer_steps")
    agent = _values(records, "update/agent/with_gradient")
    designer = _values(records, "update/designer/with_gradient")
    candidates = _values(records, "designer/candidates")
    designed = sum(candidates) > 0
    regrets = _values(records, "envs/regret")
    returns = _values(records, "agent/return")
    truncated = _values(records, "agent/truncated")
    return RunSummary(
        iterations=len(records),
        with_optimizer_step=sum(s > 0 for s in steps),
        agent_gradient_iterations=sum(a > 0 for a in agent),
        agent_gradient_samples=int(sum(agent)),
        designer_gradient_iterations=sum(d > 0 for d in designer) if designed else None,
        designer_gradient_samples=int(sum(designer)) if designed else None,
        valid_designs=int(sum(_values(records, "designer/valid"))) if designed else None,
        candidates=int(sum(candidates)) if designed else None,
        regret_nonzero=sum(r != 0 for r in regrets),
        regret_range=_span(regrets),
        return_first_last=(returns[0], returns[-1]) if returns else None,
        truncated_mean=sum(truncated) / len(truncated) if truncated else None,
        mismatch_range=_span(_values(records, "update/mismatch/logprob_abs_diff_mean")),
        seconds_range=_span(_values(records, "time/total")),
    )


def _pair(pair: tuple[float, float] | None, spec: str, joiner: str) -> str:
    return "—" if pair is None else f"{pair[0]:{spec}}{joiner}{pair[1]:{spec}}"


def _row(label: str, s: RunSummary) -> list[str]:
    n = s.iterations
    designer = (
        "—"
        if s.designer_gradient_iterations is None
        else f"{s.designer_gradient_samples} in {s.designer_gradient_iterations} of {n}"
    )
    return [
        label,
        f"{s.with_optimizer_step} of {n}",
        f"{s.agent_gradient_samples} in {s.agent_gradient_iterations} of {n}",
        designer,
        "—" if s.candidates is None else f"{s.valid_designs} of {s.candidates}",
        f"{s.regret_nonzero} of {n}, {_pair(s.regret_range, '+.3f', ' to ')}",
        _pair(s.return_first_last, ".3f", " → "),
        "—" if s.truncated_mean is None else f"{s.truncated_mean:.2f}",
        _pair(s.mismatch_range, ".3g", "-"),
        _pair(s.seconds_range, ".0f", "-"),
    ]


HEADERS = [
    "run",
    "iterations with an optimizer step",
    "agent samples with gradient",
    "designer samples with gradient",
    "valid designs",
    "regret nonzero, range",
    "agent return first → last",
    "truncated (mean)",
    "mean abs Δ logprob",  # no pipes: the table is markdown
    "s / iteration",
]


def summary_table(runs: dict[str, list[dict[str, Any]]]) -> str:
    """One GitHub-markdown row per run (label: metrics records)."""
    rows = [_row(label, summarize(records)) for label, records in runs.items()]
    return tabulate(rows, HEADERS, tablefmt="github", disable_numparse=True)
