"""Procedural envs at the learner's frontier: Reasoning-Gym tasks as multi-turn envs with
difficulty levels, and RLVE's per-env difficulty scheduler.

Below both training (the fixed baseline's adaptive pool) and evaluation (the held-out ladder).
"""

from spade.procedural.env import PROCEDURAL_PREFIX, ProceduralEnv, boxed_answer
from spade.procedural.levels import (
    RangeMode,
    TaskError,
    curriculum_levels,
    dataset,
    level_config,
    unsafe_scorer,
)
from spade.procedural.pool import POOL_TASKS
from spade.procedural.scheduler import Ceiling, LevelScheduler, SchedulerConfig

__all__ = [
    "POOL_TASKS",
    "PROCEDURAL_PREFIX",
    "RangeMode",
    "Ceiling",
    "LevelScheduler",
    "ProceduralEnv",
    "SchedulerConfig",
    "TaskError",
    "boxed_answer",
    "curriculum_levels",
    "dataset",
    "level_config",
    "unsafe_scorer",
]
