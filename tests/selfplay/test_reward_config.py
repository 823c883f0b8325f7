"""The designer reward's `reward:` section: every constant is a documented, validated field
that YAML and `--set` reach, and the reward kinds are the registry's keys, nowhere else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from spade.cli.train import build_parser, overrides
from spade.selfplay.config import ConfigError, RewardConfig, load_config
from spade.selfplay.rewards import DESIGNER_REWARDS

CONSTANTS = {  # a valid setting other than the default for each field
    "kind": "learning_potential",
    "plateau_low": 0.3,
    "plateau_high": 0.7,
    "plateau_width": 0.2,
    "w_plateau": 0.5,
    "w_regret": 0.5,
    "regret_scale": 0.3,
    "ema_alpha": 0.1,
    "invalid_penalty": -0.2,
}


def test_every_field_is_documented_and_the_defaults_are_the_reference_s() -> None:
    fields = RewardConfig.model_fields
    assert set(fields) == set(CONSTANTS)
    assert all(field.description for field in fields.values())
    assert RewardConfig().model_dump() == {
        "kind": "blend",
        "plateau_low": 0.4,
        "plateau_high": 0.6,
        "plateau_width": 0.25,
        "w_plateau": 0.6,
        "w_regret": 0.4,
        "regret_scale": 0.15,
        "ema_alpha": 0.05,
        "invalid_penalty": None,
    }
    assert all(CONSTANTS[name] != value for name, value in RewardConfig().model_dump().items())


def test_yaml_reaches_every_constant(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"reward": CONSTANTS}))
    assert load_config(path).reward.model_dump() == CONSTANTS


def test_set_reaches_every_constant() -> None:
    args = []
    for name, value in CONSTANTS.items():
        args += ["--set", f"reward.{name}={value}"]
    config = load_config(None, overrides(build_parser().parse_args(args)))
    assert config.reward.model_dump() == CONSTANTS
    one = load_config(None, overrides(build_parser().parse_args(["--set", "reward.ema_alpha=1"])))
    assert one.reward.ema_alpha == 1.0 and one.reward.plateau_low == 0.4  # the rest as before


def test_the_reward_kinds_are_the_registry_s_keys() -> None:
    for kind in DESIGNER_REWARDS:
        assert load_config(None, {"reward.kind": kind}).reward.kind == kind
    # The command line's --reward offers exactly the registry's kinds.
    [option] = [a for a in build_parser()._actions if "--reward" in a.option_strings]
    assert list(option.choices or []) == list(DESIGNER_REWARDS)
    assert overrides(build_parser().parse_args(["--reward", "solve_rate"])) == {
        "reward.kind": "solve_rate"
    }


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            {"reward.kind": "minimax"},
            "config: reward.kind: unknown designer reward 'minimax'; use one of blend, "
            "regret, solve_rate, learning_potential",
        ),
        (
            {"reward.plateau_low": 0.7},
            "config: reward: plateau_low (0.7) must not exceed plateau_high (0.6)",
        ),
        (
            {"reward.w_regret": -0.1},
            "config: reward.w_regret: Input should be greater than or equal to 0",
        ),
        (
            {"reward.w_plateau": 0, "reward.w_regret": 0},
            "config: reward: w_plateau and w_regret are both 0",
        ),
        ({"reward.plateau_high": 1.5}, "config: reward.plateau_high: Input should be less than"),
        ({"reward.plateau_width": 0}, "config: reward.plateau_width: Input should be greater"),
        ({"reward.regret_scale": 0}, "config: reward.regret_scale: Input should be greater"),
        ({"reward.ema_alpha": 0}, "config: reward.ema_alpha: Input should be greater than 0"),
        ({"reward.ema_alpha": 1.5}, "config: reward.ema_alpha: Input should be less than"),
        ({"reward.regret_scale": ".nan"}, "config: reward.regret_scale: Input should be a finite"),
        ({"reward.invalid_penalty": ".inf"}, "config: reward.invalid_penalty: Input should be"),
        ({"reward.nope": 1}, "config: reward.nope: Extra inputs are not permitted"),
    ],
)
def test_a_bad_reward_setting_is_a_one_line_error(setting: dict[str, Any], message: str) -> None:
    values = {key: yaml.safe_load(v) if isinstance(v, str) else v for key, v in setting.items()}
    with pytest.raises(ConfigError) as error:
        load_config(None, values)
    assert str(error.value).startswith(message), str(error.value)
    assert "\n" not in str(error.value)


def test_kinds_without_regret_need_no_hinted_plays() -> None:
    for kind in DESIGNER_REWARDS:
        setting = {"agent.hinted_plays": False, "reward.kind": kind}
        if kind in ("blend", "regret"):
            with pytest.raises(ConfigError, match=f"which the '{kind}' designer reward needs"):
                load_config(None, setting)
        else:
            assert not load_config(None, setting).agent.hinted_plays
