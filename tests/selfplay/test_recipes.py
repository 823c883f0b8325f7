"""The recipes of configs/: every config is listed in configs/recipes.yaml, loads with the
loader of its command (a typo in a field, a bad section or an impossible combination fails
here, not minutes into a warm start or an RL run), and starts only from what a listed recipe
makes; a start that is not made yet is one line naming the recipe and command that make it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from spade.selfplay.config import ConfigError, load_config
from spade.selfplay.recipes import Recipe, load_recipes, maker, missing_start
from spade.selfplay.warmup.run import load_warmup_config

ROOT = Path(__file__).parents[2]
INDEX = ROOT / "configs" / "recipes.yaml"
RECIPES = load_recipes(INDEX)
LOADERS = {"train": load_config, "warmup": load_warmup_config}


def run_paths(value: Any) -> list[str]:
    """Every string in a config that names something under runs/ (a model, known designs)."""
    if isinstance(value, dict):
        return [p for v in value.values() for p in run_paths(v)]
    if isinstance(value, list):
        return [p for v in value for p in run_paths(v)]
    return [value] if isinstance(value, str) and value.startswith("runs/") else []


def test_every_config_in_configs_is_a_listed_recipe() -> None:
    configs = {p.relative_to(ROOT) for p in (ROOT / "configs").rglob("*.yaml")} - {
        INDEX.relative_to(ROOT)
    }
    assert configs == {recipe.file for recipe in RECIPES}


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_each_recipe_loads_with_its_commands_loader(recipe: Recipe) -> None:
    LOADERS[recipe.command](ROOT / recipe.file)


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_each_recipe_starts_from_what_a_listed_recipe_makes(
    recipe: Recipe, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the recipes' runs/ paths are relative to the repository root
    raw = yaml.safe_load((ROOT / recipe.file).read_text())
    model = LOADERS[recipe.command](ROOT / recipe.file).model
    needed = run_paths(raw)
    assert model in needed or not model.startswith("runs/")
    for path in needed:
        made_by = maker(path, RECIPES)
        assert made_by is not None, f"{recipe.file}: {path} is made by no recipe in {INDEX.name}"
        assert made_by != recipe
        # The header says how to make the start too, so the file alone is a recipe.
        assert made_by.command_line in (ROOT / recipe.file).read_text()
    assert recipe.command_line in (ROOT / recipe.file).read_text()


def test_each_command_writes_where_the_index_says() -> None:
    warm = Recipe(name="w", file=Path("w.yaml"), command="warmup", run_dir=Path("runs/w"),
                  purpose="")  # fmt: skip
    trained = warm.model_copy(update={"command": "train"})
    assert warm.makes("runs/w/sft/model") and warm.makes("./runs/w/data/designer.jsonl")
    assert not warm.makes("runs/w/final") and not warm.makes("runs/w2/sft/model")
    assert trained.makes("runs/w/final") and not trained.makes("runs/w/sft/model")


def copy_recipes(into: Path) -> None:
    shutil.copytree(ROOT / "configs", into / "configs")


def test_a_missing_start_names_the_recipe_and_command_that_make_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_recipes(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert missing_start("runs/ladder-warm/sft/model") == (
        "model runs/ladder-warm/sft/model does not exist: make it with `spade-train warmup "
        "--config configs/ladder/warmup.yaml --run-dir runs/ladder-warm` (recipe ladder-warm "
        "in configs/recipes.yaml)"
    )
    (tmp_path / "runs" / "ladder-warm" / "data").mkdir(parents=True)
    assert "finish it with `spade-train warmup --resume runs/ladder-warm`" in str(
        missing_start("runs/ladder-warm/sft/model")
    )
    # An alias, a path no recipe makes, a model dir that is there: not the index's business.
    made = tmp_path / "runs" / "ladder-fixed" / "final"
    made.mkdir(parents=True)
    (made / "config.json").write_text("{}")
    for model in ("smollm2-135m", "runs/other/sft/model", "runs/ladder-fixed/final"):
        assert missing_start(model) is None


def test_spade_train_stops_in_one_line_when_a_recipes_start_is_missing(tmp_path: Path) -> None:
    copy_recipes(tmp_path)
    command = [sys.executable, "-m", "spade.cli.train", "--config", "configs/ladder/fixed.yaml",
               "--run-dir", "runs/ladder-fixed"]  # fmt: skip
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: spade-train: model runs/ladder-warm-agent/sft/model does not exist: make it with "
        "`spade-train warmup --config configs/ladder/warmup-agent.yaml --run-dir "
        "runs/ladder-warm-agent` (recipe ladder-warm-agent in configs/recipes.yaml)"
    ]
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("index", "message"),
    [
        ("recipes: [{name: a, file: a.yaml, command: eval, run_dir: runs/a, purpose: p}]",
         "recipes.yaml: recipes.0.command: Input should be 'train' or 'warmup'"),
        ("recipes: [{name: a, file: a.yaml, command: train, run_dir: runs/a, purpose: p},"
         " {name: a, file: b.yaml, command: train, run_dir: runs/b, purpose: p}]",
         "recipes.yaml: name a listed more than once"),
    ],
)  # fmt: skip
def test_a_bad_index_is_a_one_line_error(tmp_path: Path, index: str, message: str) -> None:
    (tmp_path / "recipes.yaml").write_text(index)
    with pytest.raises(ConfigError, match=message):
        load_recipes(tmp_path / "recipes.yaml")
