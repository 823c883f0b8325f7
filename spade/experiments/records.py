"""Reading an experiment's committed artifacts (no run directory needed).

Everything the verdict, the figures and the viewer show comes from here: per-sample scores of
each evaluation unit, each training unit's metrics, each unit's recorded wall time.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spade.experiments.plan import WARM, MetricRef, Plan, load_plan
from spade.experiments.units import Layout, Unit, units, warm_unit

Scores = dict[str, float]
"""Sample id → the sample's value of one metric."""


def env_of(sample_id: str) -> str:
    """The env (cluster) a sample belongs to: `spade-seed/HighLowEnv-v1@0/123` → its env
    without level and seed; ids with no env part (gsm8k's row index) are their own."""
    head = sample_id.rsplit("/", 1)[0] if "/" in sample_id else sample_id
    return head.split("@", 1)[0]


@dataclass(frozen=True)
class Experiment:
    """An experiment folder: its plan and what its units recorded."""

    root: Path
    plan: Plan

    @classmethod
    def open(cls, root: Path) -> Experiment:
        return cls(root, load_plan(root / "plan.yaml"))

    @property
    def layout(self) -> Layout:
        return Layout.of(self.root / "plan.yaml", self.plan)

    def unit_record(self, unit: Unit) -> dict[str, Any] | None:
        path = self.layout.artifacts(unit) / "unit.json"
        if not path.is_file():
            return None
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return record

    def done(self) -> list[Unit]:
        return [u for u in units(self.plan) if self.unit_record(u) is not None]

    def missing(self) -> list[Unit]:
        return [u for u in units(self.plan) if self.unit_record(u) is None]

    def eval_unit(self, arm: str, seed: int | None, eval_set: str) -> Unit:
        """The evaluation that scores `arm` for `seed`: a trained arm's own, the warm start
        that seed trained from, or a checkpoint arm's one evaluation."""
        arm_plan = self.plan.arms[arm]
        if arm_plan.trained:
            return Unit("eval", arm, seed, eval_set)
        scored = warm_unit(self.plan, seed).seed if arm_plan.checkpoint == WARM else None
        return Unit("eval", arm, scored, eval_set)

    def scores(self, arm: str, seed: int | None, ref: MetricRef) -> Scores | None:
        """Per-sample values of `ref` for an arm's seed (a checkpoint arm: its one
        evaluation); None when that unit has not run."""
        unit = self.eval_unit(arm, seed, ref.set)
        if self.unit_record(unit) is None:
            return None
        values: Scores = {}
        path = self.layout.artifacts(unit) / "samples.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("benchmark") != ref.benchmark:
                continue
            value = record["score"] if ref.metric == "score" else record["metrics"].get(ref.metric)
            if isinstance(value, int | float) and math.isfinite(value):
                values[str(record["id"])] = float(value)
        return values

    def metrics(self, arm: str, seed: int) -> list[dict[str, Any]]:
        """A training unit's metrics.jsonl records (empty when it has not run)."""
        path = self.layout.artifacts(Unit("train", arm, seed)) / "metrics.jsonl"
        if not path.is_file() or self.unit_record(Unit("train", arm, seed)) is None:
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]

    def trained_arms(self) -> list[str]:
        return [name for name, arm in self.plan.arms.items() if arm.trained]


def open_experiment(root: Path) -> Experiment:
    return Experiment.open(root)
