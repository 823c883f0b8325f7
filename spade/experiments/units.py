"""The units of an experiment: the warm start, each (arm, seed) training run, each evaluation.

A unit is the smallest thing the runner does, skips or resumes. Its `identity` is what the
plan says it must be (a training run's full resolved config, an evaluation's arguments and
checkpoint); the runner compares it with what a unit recorded before trusting its artifacts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from spade.experiments.plan import WARM, Plan, PlanError
from spade.selfplay.config import TrainConfig, dump_config, load_config

UnitKind = Literal["warm", "train", "eval"]
RUNS_ROOT = Path("runs") / "experiments"
"""Where units write what is not committed (weights, full outputs), per experiment."""


@dataclass(frozen=True)
class Unit:
    kind: UnitKind
    arm: str | None = None
    seed: int | None = None
    eval_set: str | None = None

    @property
    def name(self) -> str:
        """`warm`, `warm/seed2/build` (a rebuilt warm start), `fixed/seed0/train`,
        `fixed/seed0/ladder0`, `base/ladder0`, `warm/seed2/ladder0`."""
        if self.kind == "warm":
            return "warm" if self.seed is None else f"warm/seed{self.seed}/build"
        parts = [self.arm or "", *([f"seed{self.seed}"] if self.seed is not None else [])]
        return "/".join([*parts, "train" if self.kind == "train" else self.eval_set or ""])


def selected(name: str, only: Sequence[str]) -> bool:
    """Whether `only` (unit names or their prefixes, e.g. `fixed/seed0`) picks unit `name`."""
    return any(name == pick or name.startswith(pick.rstrip("/") + "/") for pick in only)


def trained_by(plan: Plan, unit: Unit) -> Unit | None:
    """The training unit whose checkpoint an evaluation scores (None: a checkpoint arm's,
    which has a seed only when it is the rebuilt warm start that seed trains from)."""
    if unit.kind != "eval" or unit.seed is None or not plan.arms[unit.arm or ""].trained:
        return None
    return Unit("train", unit.arm, unit.seed)


def warm_unit(plan: Plan, seed: int | None) -> Unit:
    """The unit that records the warm start `seed` trains from."""
    return Unit("warm", seed=seed if plan.rebuild_of(seed) is not None else None)


def units(plan: Plan) -> list[Unit]:
    """Every unit, in the order they run, less those a deviation drops: the warm start; the
    checkpoint arms on the primary metric's evaluation set; per seed, every arm's training
    and then its evaluations, the primary set first (so each seed's registered comparison is
    complete before the next seed starts, and every evaluation of a trained checkpoint runs
    while it is still on disk: run directories are not committed and may not outlive a
    session); then the checkpoint arms on the other sets. A seed that trains from a rebuilt
    warm start (a deviation) records the rebuild and evaluates it first, for the same
    reason."""
    first = plan.evaluation.primary.set
    later = [name for name in plan.evaluation.sets if name != first]
    fixed = [name for name, arm in plan.arms.items() if not arm.trained]
    trained = [name for name, arm in plan.arms.items() if arm.trained]

    def evals(arm: str, seed: int | None, sets: list[str]) -> list[Unit]:
        return [Unit("eval", arm, seed, s) for s in sets if arm in plan.arms_of(s)]

    warm = [name for name in fixed if plan.arms[name].checkpoint == WARM]
    order = [Unit("warm")]
    for name in fixed:
        order += evals(name, None, [first])
    for seed in plan.seeds:
        if plan.rebuild_of(seed) is not None:
            order.append(Unit("warm", seed=seed))
            for name in warm:
                order += evals(name, seed, [first, *later])
        for name in trained:
            order += [Unit("train", name, seed), *evals(name, seed, [first, *later])]
    for name in fixed:
        order += evals(name, None, later)
    unknown = sorted(plan.dropped - {unit.name for unit in order})
    if unknown:
        raise PlanError(f"deviations drop units the plan does not have: {', '.join(unknown)}")
    return [unit for unit in order if unit.name not in plan.dropped]


@dataclass(frozen=True)
class Layout:
    """Where a plan's units write: `root` (committed) and `runs` (not committed)."""

    root: Path
    runs: Path

    @classmethod
    def of(cls, plan_path: Path, plan: Plan, runs_root: Path = RUNS_ROOT) -> Layout:
        return cls(plan_path.parent, runs_root / plan.name)

    def artifacts(self, unit: Unit) -> Path:
        return self.root / "units" / unit.name

    def run_dir(self, unit: Unit, plan: Plan) -> Path:
        if unit.kind == "warm":
            return plan.warm_run_dir(unit.seed)
        base = self.runs / (unit.arm or "")
        if unit.seed is not None:
            base = base / f"seed{unit.seed}"
        return base if unit.kind == "train" else base / f"eval-{unit.eval_set}"


def train_config_text(plan: Plan, unit: Unit) -> str:
    """The full config of an (arm, seed) training run: the arm's recipe, its overrides, the
    plan's warm start, seed and iterations."""
    arm = plan.arms[unit.arm or ""]
    overrides: dict[str, Any] = dict(arm.set)
    overrides.update(
        model=str(plan.warm_model(unit.seed)), seed=unit.seed, iterations=plan.iterations
    )
    overrides.update({ablation: True for ablation in arm.ablations})
    config = load_config(arm.config, overrides)
    return dump_config(_from_warm_run_dir(config, plan, unit.seed))


def _from_warm_run_dir(config: TrainConfig, plan: Plan, seed: int | None) -> TrainConfig:
    """Point what an arm reads from the registered warm start's run dir (its designer data,
    `designer.known_designs`) at the run dir seed `seed`'s warm start is made in."""
    warm_dir = plan.warm_run_dir(seed)
    known = config.designer.known_designs
    if warm_dir == plan.warm_start.run_dir or known is None:
        return config
    paths = [known] if isinstance(known, str) else known
    moved = [str(_rebased(Path(path), plan.warm_start.run_dir, warm_dir)) for path in paths]
    designer = config.designer.model_copy(update={"known_designs": moved})
    return config.model_copy(update={"designer": designer})


def _rebased(path: Path, old: Path, new: Path) -> Path:
    return new / path.relative_to(old) if path.is_relative_to(old) else path


def checkpoint_of(plan: Plan, layout: Layout, unit: Unit) -> str:
    """What an evaluation unit scores: a training run's final weights, the warm start, or a
    checkpoint arm's model (an alias such as smollm2-135m, or a path)."""
    trainer = trained_by(plan, unit)
    if trainer is not None:
        return str(layout.run_dir(trainer, plan) / "final")
    checkpoint = plan.arms[unit.arm or ""].checkpoint or ""
    return str(plan.warm_model(unit.seed)) if checkpoint == WARM else checkpoint


def eval_identity(plan: Plan, layout: Layout, unit: Unit) -> dict[str, Any]:
    return {
        "args": list(plan.evaluation.sets[unit.eval_set or ""].args),
        "checkpoint": checkpoint_of(plan, layout, unit),
    }


def config_differences(recorded: str, planned: str, defaults: str | None = None) -> list[str]:
    """`key: recorded ≠ planned` for each top-level or nested field that differs. With the
    schema's `defaults` (a config dumped alike, of the values that keep the behaviour from
    before each field: spade.selfplay.config.prior_config): a field the recorded config lacks
    is no difference where the plan has it at that value. That is a field added to the schema
    after the unit ran, at the value that behaves as the unit did, so the recipe the unit ran
    is still the planned one."""
    default = yaml.safe_load(defaults) if defaults else {}
    return _differences(yaml.safe_load(recorded) or {}, yaml.safe_load(planned) or {}, "", default)


def _differences(left: Any, right: Any, prefix: str, default: Any) -> list[str]:
    if isinstance(left, dict) and isinstance(right, dict):
        found: list[str] = []
        defaults = default if isinstance(default, dict) else {}
        for key in sorted(set(left) | set(right), key=str):
            if key not in left and key in defaults and right.get(key) == defaults[key]:
                continue  # added to the schema since, at the default that keeps the behaviour
            found += _differences(
                left.get(key), right.get(key), f"{prefix}{key}.", defaults.get(key)
            )
        return found
    return [] if left == right else [f"{prefix.rstrip('.')}: {left!r} ≠ {right!r}"]
