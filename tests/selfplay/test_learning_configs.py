"""Every config under configs/ (the learning run's, the ladder's) loads with the loader of its
command: a typo in a field, a bad section or an impossible combination fails here, not
minutes into a warm start or an RL run. The kit arms differ only where they must."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from spade.selfplay.config import load_config
from spade.selfplay.warmup.run import load_warmup_config

CONFIGS = sorted((Path(__file__).parents[2] / "configs").rglob("*.yaml"))


def test_the_learning_configs_are_found() -> None:
    assert len(CONFIGS) >= 10


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_each_learning_config_loads(path: Path) -> None:
    if "sft" in yaml.safe_load(path.read_text()):  # `spade-train warmup`
        load_warmup_config(path)
    else:  # `spade-train`
        load_config(path)


@pytest.mark.parametrize("suffix", ["kit", "kit2"])
def test_the_kit_arms_share_the_budget(suffix: str) -> None:
    """SPADE and its fixed baseline: same start, iterations, plays, turns, tokens and update;
    only the mode, the designer's scaffold and kinds, and the invalid-design score differ."""
    root = Path(__file__).parents[2] / "configs" / "learning"
    spade = load_config(root / f"spade-{suffix}.yaml").model_dump()
    fixed = load_config(root / f"fixed-{suffix}.yaml").model_dump()
    differ = {key for key in spade if spade[key] != fixed[key]}
    assert differ == {"mode", "designer", "reward"}
    for key in ("scaffold", "kinds"):
        spade["designer"].pop(key), fixed["designer"].pop(key)
    assert spade["designer"] == fixed["designer"]
