"""The loop's own resumable state, saved inside each checkpoint next to the learner's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from spade.selfplay.rewards import SkillEMA

FILE = "loop_state.json"


@dataclass
class LoopState:
    step: int
    """Iterations completed."""
    ema: SkillEMA


def write(directory: Path, state: LoopState) -> None:
    data = {"step": state.step, "ema_alpha": state.ema.alpha, "ema": dict(state.ema.values)}
    (directory / FILE).write_text(json.dumps(data, indent=2, sort_keys=True))


def read(directory: Path) -> LoopState:
    data = json.loads((directory / FILE).read_text())
    ema = SkillEMA(alpha=data["ema_alpha"])
    ema.values.update(data["ema"])
    return LoopState(int(data["step"]), ema)
