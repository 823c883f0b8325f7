"""The loop's own resumable state, saved inside each checkpoint next to the learner's."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spade.selfplay.rewards import SkillEMA

FILE = "loop_state.json"


@dataclass
class LoopState:
    step: int
    """Iterations completed."""
    ema: SkillEMA
    scheduler: dict[str, Any] = field(default_factory=dict)
    """The level scheduler's ceilings (`spade.procedural.LevelScheduler.to_json`)."""


def write(directory: Path, state: LoopState) -> None:
    data = {
        "step": state.step,
        "ema_alpha": state.ema.alpha,
        "ema": dict(state.ema.values),
        "scheduler": state.scheduler,
    }
    (directory / FILE).write_text(json.dumps(data, indent=2, sort_keys=True))


def read(directory: Path) -> LoopState:
    data = json.loads((directory / FILE).read_text())
    ema = SkillEMA(alpha=data["ema_alpha"])
    ema.values.update(data["ema"])
    # A checkpoint written before the scheduler existed has no ceilings: all start over.
    return LoopState(int(data["step"]), ema, data.get("scheduler", {}))
