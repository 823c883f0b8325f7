"""The recipes of `configs/`: which config makes which run directory, and with what command.

`configs/recipes.yaml` lists each recipe: its name, its config file, its command (`train`:
`spade-train`, `warmup`: `spade-train warmup`), the run directory its command line writes and a
one-line purpose. A recipe that starts from another one's output (`model:
runs/ladder-warm/sft/model`) finds the recipe that makes it here, so a start that is not there
yet is one line naming the command that makes it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from spade.models.builtin import BUILTIN_MODELS
from spade.selfplay.config import ConfigError, validation_message

INDEX = Path("configs/recipes.yaml")
"""The index, relative to the working directory, as the recipes' own `runs/` paths are."""

Command = Literal["train", "warmup"]

OUTPUTS: dict[Command, tuple[str, ...]] = {
    "warmup": ("sft/model", "data"),  # spade.selfplay.warmup.run: the warm model, its data
    "train": ("final",),  # SelfPlayRun.finish: the final HF model dir
}
"""What each command writes under its run directory that another recipe may start from."""


class Recipe(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="short name, unique in the index")
    file: Path = Field(description="the config file, relative to the repository root")
    command: Command = Field(description="train: spade-train; warmup: spade-train warmup")
    run_dir: Path = Field(description="the run directory its command line writes")
    purpose: str = Field(description="one line: what it makes and what for")

    @property
    def command_line(self) -> str:
        sub = " warmup" if self.command == "warmup" else ""
        return f"spade-train{sub} --config {self.file} --run-dir {self.run_dir}"

    @property
    def resume_line(self) -> str:
        sub = " warmup" if self.command == "warmup" else ""
        return f"spade-train{sub} --resume {self.run_dir}"

    def outputs(self) -> list[Path]:
        return [self.run_dir / part for part in OUTPUTS[self.command]]

    def makes(self, path: str | Path) -> bool:
        """Whether `path` is one of this recipe's outputs or inside one."""
        target = _absolute(path)
        return any(target == out or out in target.parents for out in map(_absolute, self.outputs()))


class RecipeIndex(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    recipes: list[Recipe]

    @model_validator(mode="after")
    def _unique(self) -> RecipeIndex:
        for field in ("name", "file", "run_dir"):
            values = [getattr(r, field) for r in self.recipes]
            repeated = sorted({str(v) for v in values if values.count(v) > 1})
            if repeated:
                raise ValueError(f"{field} {', '.join(repeated)} listed more than once")
        return self


def load_recipes(path: Path = INDEX) -> list[Recipe]:
    """The recipes of an index file; a bad file is a ConfigError naming it and the field."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    try:
        return RecipeIndex.model_validate(raw).recipes
    except ValidationError as exc:
        raise ConfigError(validation_message(path, exc)) from None


def maker(path: str | Path, recipes: list[Recipe]) -> Recipe | None:
    """The recipe whose run writes `path`, if any."""
    return next((recipe for recipe in recipes if recipe.makes(path)), None)


def missing_start(model: str, index: Path = INDEX) -> str | None:
    """One line for a start model that is not there yet but a recipe of the index makes;
    None for an alias, a model dir that exists, or a path no recipe makes (the learner
    reports those)."""
    if model in BUILTIN_MODELS or (Path(model) / "config.json").is_file() or not index.is_file():
        return None
    try:
        recipe = maker(model, load_recipes(index))
    except ConfigError:
        return None  # the learner's own error about the model says enough
    if recipe is None:
        return None
    if recipe.run_dir.is_dir() and any(recipe.run_dir.iterdir()):
        return (
            f"model {model} does not exist: {recipe.run_dir} holds an unfinished run of "
            f"recipe {recipe.name} ({index}); finish it with `{recipe.resume_line}`"
        )
    return (
        f"model {model} does not exist: make it with `{recipe.command_line}` "
        f"(recipe {recipe.name} in {index})"
    )


def _absolute(path: str | Path) -> Path:
    return Path(os.path.abspath(path))
