"""A warm start is reproducible bit for bit on one machine: the same recipe from scratch gives
weights with the same sha256. spade-experiment relies on it: run directories are not
committed, so a machine that lost an experiment's warm start rebuilds it and checks the
rebuilt weights against the recorded sha256 before training more arms from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from spade.models.weights import weights_sha256

REPO = Path(__file__).resolve().parents[2]


def _warm_start(config: Path, run_dir: Path) -> str | None:
    command = [sys.executable, "-m", "spade.cli.train", "warmup", "--config", str(config)]
    result = subprocess.run(
        [*command, "--run-dir", str(run_dir)], capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return weights_sha256(run_dir / "sft" / "model")


@pytest.mark.slow
def test_the_ladder_warm_start_recipe_gives_the_same_weights_twice(tmp_path: Path) -> None:
    # The ladder's recipe (both roles, levels, the procedural pool), cut to a few examples.
    recipe = yaml.safe_load((REPO / "configs/ladder/warmup.yaml").read_text(encoding="utf-8"))
    recipe["corpus"]["source"] = str((REPO / recipe["corpus"]["source"]).resolve())
    recipe.update(
        agent_episodes_per_env=1,
        agent_levels=[0],
        pool_tasks={"family_relationships": 1, "arc_1d": 1},
        pool_episodes_per_task=2,
        designer_examples=4,
        hint_examples=2,
    )
    recipe["sft"].update(grad_accum=2, max_length=768, save_steps=2)
    config = tmp_path / "warmup.yaml"
    config.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    first = _warm_start(config, tmp_path / "first")
    second = _warm_start(config, tmp_path / "second")
    assert first is not None
    assert first == second
