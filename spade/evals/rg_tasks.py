"""Reasoning-Gym items for the `reasoning_gym` runner: hard configurations, seeded items.

A task's "hard" configuration comes from Reasoning-Gym's own difficulty settings: the task's
curriculum set to one level for every attribute (`level`, overridable per task in
`levels`), with range attributes taken from that level's segment only
(`RangeAttributeMode.UPPER_BOUND`). Items are `create_dataset(task, seed=seed, ...)[index]`:
Reasoning-Gym derives item `index` from `seed + index`, so an item never depends on which
other items are generated. Items change between Reasoning-Gym releases, so the declaration
pins the version and a different installed version is an error, not a silent change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from importlib import metadata
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from spade.evals.declarations import Declaration, DeclarationError
from spade.procedural import RangeMode, TaskError, level_config


class RgOptions(BaseModel):
    """The `options:` of a `runner: reasoning_gym` declaration."""

    model_config = ConfigDict(extra="forbid")

    reasoning_gym_version: str = Field(description="the reasoning-gym release that made the items")
    category: str = Field(description="the category this benchmark rolls up (for the record)")
    tasks: list[str] = Field(min_length=1, description="Reasoning-Gym dataset names, in order")
    items_per_task: int = Field(20, ge=1, description="items 0..N-1 of each task")
    seed: int = Field(42, description="the dataset seed of every task")
    level: int = Field(2, ge=0, description="curriculum level of every attribute (the hard set)")
    levels: dict[str, int] = Field(default_factory=dict, description="per-task level overrides")
    range_mode: RangeMode = Field("upper_bound", description="how a level becomes a value range")
    system_prompt: str = Field("default", description="a key of reasoning_gym.utils.SYSTEM_PROMPTS")


def parse_rg_options(declaration: Declaration) -> RgOptions:
    options = declaration.typed_options(RgOptions)
    unknown = sorted(set(options.levels) - set(options.tasks))
    if unknown:
        raise DeclarationError(f"{declaration.name}: options.levels names unlisted tasks {unknown}")
    return options


def installed_version() -> str | None:
    try:
        return metadata.version("reasoning-gym")
    except metadata.PackageNotFoundError:
        return None


def require_version(declaration: Declaration, version: str) -> None:
    """Items are only comparable when made by the declared generator release `version`."""
    found = installed_version()
    if found != version:
        have = f"version {found} is installed" if found else "it is not installed"
        raise DeclarationError(
            f"{declaration.name}: items come from reasoning-gym=={version}, "
            f"but {have}; run `pip install reasoning-gym=={version}`"
        )


@dataclass(frozen=True)
class RgItem:
    """One generated item and the scorer of the dataset that made it."""

    sample_id: str
    task: str
    index: int
    entry: dict[str, Any]
    score_answer: Callable[[str | None, dict[str, Any]], float]

    @property
    def question(self) -> str:
        return str(self.entry["question"])


class RgTasks:
    """The declared tasks' hard configurations and their seeded items (datasets made once)."""

    def __init__(self, options: RgOptions) -> None:
        self.options = options
        self._datasets: dict[str, Any] = {}

    def sample_ids(self) -> list[str]:
        return [
            f"{task}/{i}" for task in self.options.tasks for i in range(self.options.items_per_task)
        ]

    def level(self, task: str) -> int:
        return self.options.levels.get(task, self.options.level)

    def config(self, task: str) -> dict[str, Any]:
        """The task's hard configuration as keyword arguments of `create_dataset`."""
        try:
            config = level_config(task, self.level(task), self.options.range_mode)
        except TaskError as exc:
            raise DeclarationError(str(exc)) from None
        return {"seed": self.options.seed, "size": self.options.items_per_task, **config}

    def dataset(self, task: str) -> Any:
        if task not in self._datasets:
            import reasoning_gym

            self._datasets[task] = reasoning_gym.create_dataset(task, **self.config(task))
        return self._datasets[task]

    def item(self, sample_id: str) -> RgItem:
        task, _, index = sample_id.rpartition("/")
        if task not in self.options.tasks or not index.isdigit():
            raise ValueError(f"unknown sample id {sample_id!r} (ids look like '{self.example}')")
        position = int(index)
        if position >= self.options.items_per_task:
            raise ValueError(f"{sample_id!r}: only items 0..{self.options.items_per_task - 1}")
        dataset = self.dataset(task)
        return RgItem(sample_id, task, position, dataset[position], dataset.score_answer)

    @cached_property
    def example(self) -> str:
        return f"{self.options.tasks[0]}/0"

    def system_prompt(self) -> str:
        from reasoning_gym.utils import SYSTEM_PROMPTS

        if self.options.system_prompt not in SYSTEM_PROMPTS:
            raise DeclarationError(
                f"options.system_prompt {self.options.system_prompt!r} is not one of "
                f"reasoning-gym's prompts: {', '.join(SYSTEM_PROMPTS)}"
            )
        return str(SYSTEM_PROMPTS[self.options.system_prompt])
