"""An experiment plan: arms, paired training seeds, evaluation and the pre-registered test.

The plan is written before anything runs and lives in `experiments/NAME/plan.yaml`; every
artifact of the experiment is written next to it. Seed k of every training arm starts from the
same warm start with `seed: k` (so the same env draws and evaluation seeds), and the training
budget (iterations) is the plan's, whatever the arm's recipe says.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Alternative = Literal["two-sided", "greater", "less"]
ABLATIONS = ("no_corpus", "no_memory", "no_designer_training")
WARM = "warm"
"""The name an arm uses for the plan's warm start as its checkpoint."""


def sft_model(run_dir: Path) -> Path:
    """The weights a `spade-train warmup` run directory ends with."""
    return run_dir / "sft" / "model"


class PlanError(ValueError):
    """A plan that cannot be read or does not validate (one line, naming the file)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WarmStart(_Strict):
    """The one warm start every training arm begins from (`spade-train warmup`)."""

    config: Path = Field(description="the warm-start recipe (spade-train warmup --config)")
    run_dir: Path = Field(description="where it is made; its sft/model is every arm's model")

    @property
    def model(self) -> Path:
        return sft_model(self.run_dir)


class Arm(_Strict):
    """A training recipe run once per seed, or a checkpoint evaluated once."""

    config: Path | None = Field(None, description="spade-train recipe, run once per seed")
    set: dict[str, str | int | float | bool | None] = Field(
        default_factory=dict, description="config overrides (as spade-train --set KEY=VALUE)"
    )
    ablations: list[Literal["no_corpus", "no_memory", "no_designer_training"]] = Field(
        default_factory=list, description="paper ablations (spade-train --ablation)"
    )
    checkpoint: str | None = Field(
        None, description="evaluated as is: a model alias or path, or 'warm' for the warm start"
    )

    @model_validator(mode="after")
    def _one_source(self) -> Arm:
        if (self.config is None) == (self.checkpoint is None):
            raise ValueError("an arm has either a config (trained) or a checkpoint (evaluated)")
        if self.checkpoint is not None and (self.set or self.ablations):
            raise ValueError("a checkpoint arm takes no set/ablations (nothing is trained)")
        return self

    @property
    def trained(self) -> bool:
        return self.config is not None


class EvalSet(_Strict):
    """One spade-eval invocation, run on every arm's checkpoints."""

    args: list[str] = Field(description="spade-eval arguments, e.g. [--preset, ladder0]")
    arms: list[str] | None = Field(None, description="arms it runs on (None: all)")


class MetricRef(_Strict):
    """A per-sample metric of one benchmark of one evaluation set."""

    set: str
    benchmark: str
    metric: str = Field(description="a key of each sample's metrics, or 'score'")

    @property
    def label(self) -> str:
        return f"{self.benchmark} {self.metric} ({self.set})"


class Comparison(_Strict):
    """`a − b`, seed by seed: the training run is the unit."""

    a: str
    b: str
    alternative: Alternative = "two-sided"

    @property
    def label(self) -> str:
        return f"{self.a} − {self.b}"


class Test(_Strict):
    """The pre-registered test: the first comparison on the primary metric decides."""

    comparisons: list[Comparison] = Field(min_length=1)
    alpha: float = Field(0.05, gt=0, lt=1)
    power: float = Field(0.8, gt=0, lt=1, description="for the minimum detectable effect")
    resamples: int = Field(10_000, ge=100, description="cluster-bootstrap resamples")


class Evaluation(_Strict):
    sets: dict[str, EvalSet] = Field(min_length=1)
    primary: MetricRef
    secondary: list[MetricRef] = Field(default_factory=list)


class WarmRebuild(_Strict):
    """The warm start built again from the plan's recipe, for seeds that cannot train from
    the recorded one (its weights are gone, and a rebuild on another CPU differs in the last
    bits). Each such seed records the rebuild it used as its own unit (`warm/seedK/build`)
    and its arms, and the warm-start arm, are trained from and evaluated on that rebuild, so
    every comparison within the seed stays paired."""

    run_dir: Path = Field(description="where the rebuild is made (sft/model is the weights)")
    seeds: list[int] = Field(min_length=1, description="the seeds that train from it")


class Deviation(_Strict):
    """A change of plan after registration, dated and named in the verdict."""

    date: date
    what: str
    drops: list[str] = Field(
        default_factory=list,
        description="units this change leaves out, by name (e.g. spade/seed0/general)",
    )
    warm_rebuild: WarmRebuild | None = Field(
        None, description="seeds that train from a rebuilt warm start instead of the recorded one"
    )


class Plan(_Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    registered: date = Field(description="when the plan was written, before any unit ran")
    question: str
    warm_start: WarmStart
    arms: dict[str, Arm] = Field(min_length=2)
    seeds: list[int] = Field(min_length=1)
    iterations: int = Field(ge=1, description="training iterations of every trained arm")
    evaluation: Evaluation
    test: Test
    curves: list[str] = Field(
        default_factory=lambda: ["envs/win_rate", "agent/return", "levels/ceiling_mean"],
        description="metrics.jsonl keys drawn per arm in the figures",
    )
    deviations: list[Deviation] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Plan:
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds repeat: {self.seeds}")
        names = set(self.arms)
        for ref in [self.evaluation.primary, *self.evaluation.secondary]:
            if ref.set not in self.evaluation.sets:
                raise ValueError(f"metric {ref.label}: no evaluation set {ref.set!r}")
        for name, eval_set in self.evaluation.sets.items():
            unknown = sorted(set(eval_set.arms or []) - names)
            if unknown:
                raise ValueError(f"evaluation set {name!r}: unknown arms {', '.join(unknown)}")
        for comparison in self.test.comparisons:
            unknown = sorted({comparison.a, comparison.b} - names)
            if unknown:
                raise ValueError(f"comparison {comparison.label}: unknown arms {unknown}")
        if not any(arm.trained for arm in self.arms.values()):
            raise ValueError("no arm is trained: give at least one arm a config")
        rebuilt = [s for d in self.deviations if d.warm_rebuild for s in d.warm_rebuild.seeds]
        unknown_seeds = sorted(set(rebuilt) - set(self.seeds))
        if unknown_seeds or len(set(rebuilt)) != len(rebuilt):
            raise ValueError(
                f"warm_rebuild seeds must be planned seeds, each rebuilt once: {rebuilt}"
            )
        return self

    @property
    def dropped(self) -> set[str]:
        """Units a deviation leaves out: they are not run and the verdict names them."""
        return {name for deviation in self.deviations for name in deviation.drops}

    def rebuild_of(self, seed: int | None) -> WarmRebuild | None:
        """The rebuilt warm start `seed` trains from (None: the recorded one)."""
        for deviation in self.deviations:
            rebuild = deviation.warm_rebuild
            if rebuild is not None and seed in rebuild.seeds:
                return rebuild
        return None

    def warm_run_dir(self, seed: int | None) -> Path:
        """Where the warm start seed `seed` trains from is made (None: the registered one)."""
        rebuild = self.rebuild_of(seed)
        return self.warm_start.run_dir if rebuild is None else rebuild.run_dir

    def warm_model(self, seed: int | None) -> Path:
        """The warm-start weights seed `seed` trains from (None: the registered warm start)."""
        return sft_model(self.warm_run_dir(seed))

    def arms_of(self, eval_set: str) -> list[str]:
        chosen = self.evaluation.sets[eval_set].arms
        return [name for name in self.arms if chosen is None or name in chosen]

    @property
    def metrics(self) -> list[MetricRef]:
        return [self.evaluation.primary, *self.evaluation.secondary]


def load_plan(path: Path) -> Plan:
    """Read and validate a plan; any problem is one PlanError line naming the file."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlanError(f"{path}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise PlanError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise PlanError(f"{path}: expected a mapping (name, arms, seeds, ...)")
    try:
        return Plan.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise PlanError(f"{path}: {where + ': ' if where else ''}{message}") from None
