"""RLVE's adaptive difficulty, one ceiling per env: levels follow what the policy solves.

Each env with levels has a ceiling, the hardest level it is played at (0 at the start). A
play's level is drawn uniformly from the `span` levels at and below the ceiling. Only plays at
the ceiling count toward moving it: once `window` of them are in, their success rate promotes
the ceiling when it reaches `promote_at` (RLVE: 0.9), demotes it when it is at most
`demote_below` (None: never, as RLVE), and either way the count starts again. The state is
plain JSON, saved with each checkpoint, so a resumed run continues where it stopped.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class SchedulerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    span: int = Field(2, ge=1, description="levels a play is drawn from: the ceiling and below")
    window: int = Field(8, ge=1, description="plays at the ceiling that decide a move")
    promote_at: float = Field(0.9, gt=0, le=1, description="success rate that raises a ceiling")
    demote_below: float | None = Field(
        None, ge=0, lt=1, description="success rate at or under which a ceiling falls; None: never"
    )
    start: int = Field(0, ge=0, description="every env's first ceiling")

    @model_validator(mode="after")
    def _order(self) -> SchedulerConfig:
        if self.demote_below is not None and self.demote_below >= self.promote_at:
            raise ValueError("demote_below must be below promote_at")
        return self


@dataclass
class Ceiling:
    level: int
    top: int
    recent: list[bool] = field(default_factory=list)
    """Results of plays at the ceiling since it last moved."""


class LevelScheduler:
    def __init__(self, config: SchedulerConfig | None = None) -> None:
        self.config = config or SchedulerConfig()
        self.ceilings: dict[str, Ceiling] = {}

    def ceiling(self, key: str, levels: int) -> Ceiling:
        if key not in self.ceilings:
            top = levels - 1
            self.ceilings[key] = Ceiling(min(self.config.start, top), top)
        return self.ceilings[key]

    def sample(self, key: str, levels: int, rng: random.Random) -> int:
        """A level to play `key` at (an env with `levels` levels)."""
        ceiling = self.ceiling(key, levels).level
        return rng.randint(max(0, ceiling - self.config.span + 1), ceiling)

    def record(self, key: str, level: int, solved: bool) -> int:
        """Count one play; returns the env's ceiling after it (moved or not)."""
        ceiling = self.ceilings.get(key)
        if ceiling is None or level != ceiling.level:
            return ceiling.level if ceiling else level
        ceiling.recent.append(solved)
        if len(ceiling.recent) >= self.config.window:
            rate = sum(ceiling.recent) / len(ceiling.recent)
            demote = self.config.demote_below
            if rate >= self.config.promote_at and ceiling.level < ceiling.top:
                ceiling.level += 1
            elif demote is not None and rate <= demote and ceiling.level > 0:
                ceiling.level -= 1
            ceiling.recent = []
        return ceiling.level

    def levels(self) -> dict[str, int]:
        return {key: c.level for key, c in sorted(self.ceilings.items())}

    def to_json(self) -> dict[str, Any]:
        return {
            key: {"level": c.level, "top": c.top, "recent": c.recent}
            for key, c in sorted(self.ceilings.items())
        }

    @classmethod
    def from_json(
        cls, data: dict[str, Any], config: SchedulerConfig | None = None
    ) -> LevelScheduler:
        scheduler = cls(config)
        for key, value in data.items():
            scheduler.ceilings[key] = Ceiling(
                int(value["level"]), int(value["top"]), [bool(r) for r in value["recent"]]
            )
        return scheduler
