"""Reasoning-Gym tasks at a difficulty level: the curriculum's configuration, the dataset.

A level is Reasoning-Gym's own: the task's curriculum set to that global level (every
attribute at min(level, its top)), range attributes taken from that level's segment only
(`upper_bound`) or from level 0 up to it (`inclusive`). Items are `dataset[seed]`: an item
depends on the dataset seed plus its index alone, so seed `s` is the same item however the
dataset was made.

Model answers reach each task's `score_answer` in this process. That is safe only for scorers
that compare text: `unsafe_scorer` names the tasks whose module evaluates text as code
(countdown and puzzle24 parse answers with sympy, which runs `eval`), and spade refuses them
as procedural envs.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from functools import cache, lru_cache
from typing import Any, Literal

RangeMode = Literal["upper_bound", "inclusive"]
VIRTUAL_SIZE = 1 << 31
"""Items a procedural dataset claims to have: any non-negative seed is an index."""
# Builtins called bare (not `re.compile`), and sympy's parsers however they are reached.
_EVALUATES = re.compile(r"(?<![\w.])(eval|exec|compile)\(|\b(sympify|parse_expr)\(")


class TaskError(ValueError):
    """A task name or level that cannot be used; the message says which and why."""


def level_config(task: str, level: int, mode: RangeMode = "upper_bound") -> dict[str, Any]:
    """`create_dataset` keyword arguments of `task` at curriculum `level` (no seed, no size)."""
    from reasoning_gym.coaching.base_curriculum import (
        DefaultCurriculumContext,
        RangeAttributeMode,
    )
    from reasoning_gym.factory import create_curriculum

    top = curriculum_levels(task) - 1
    if not 0 <= level <= top:
        raise TaskError(f"reasoning-gym task {task!r} has levels 0..{top}, not {level}")
    curriculum = create_curriculum(task)
    curriculum.set_global_level(level)
    context = DefaultCurriculumContext(mode=RangeAttributeMode(mode))
    config = curriculum.generate_configuration({"seed": 0, "size": 1}, context)
    values = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    return {k: v for k, v in values.items() if k not in ("seed", "size")}


@cache
def curriculum_levels(task: str) -> int:
    """Levels of the task's curriculum: its longest attribute's."""
    from reasoning_gym.factory import DATASETS, create_curriculum, has_curriculum

    if task not in DATASETS:
        raise TaskError(f"reasoning-gym has no task {task!r}")
    if not has_curriculum(task):
        raise TaskError(f"reasoning-gym task {task!r} has no curriculum to set a level")
    return max(len(a.levels) for a in create_curriculum(task).attributes.values())


@lru_cache(maxsize=256)
def dataset(task: str, level: int, mode: RangeMode = "upper_bound") -> Any:
    """The task's dataset at `level` (dataset seed 0): item `s` is `dataset(...)[s]`."""
    import reasoning_gym

    config = level_config(task, level, mode)
    return reasoning_gym.create_dataset(task, seed=0, size=VIRTUAL_SIZE, **config)


@cache  # every episode opens a new env: read and scan each task's module once
def unsafe_scorer(task: str) -> str | None:
    """Why the task's module may evaluate an answer as code (None: it only compares text)."""
    from reasoning_gym.factory import DATASETS

    if task not in DATASETS:
        raise TaskError(f"reasoning-gym has no task {task!r}")
    module = inspect.getmodule(DATASETS[task][0])
    match = _EVALUATES.search(inspect.getsource(module)) if module else None
    return f"its module calls {match.group(1) or match.group(2)}()" if match else None
