"""Regret and designer rewards against hand-computed values."""

from __future__ import annotations

import pytest

from spade.selfplay.rewards import (
    DESIGNER_REWARDS,
    DesignerRewardConfig,
    SkillEMA,
    blend,
    designer_reward,
    learning_potential,
    plateau,
    regret,
    regret_reward,
    regret_score,
    solve_rate_reward,
    win_rate,
)


def test_regret_is_mean_hinted_minus_mean_unhinted() -> None:
    assert regret([1.0, 1.0, 0.0, 0.5], [0.0, 1.0, 0.0, 0.5]) == pytest.approx(0.25)
    assert regret([0.2, 0.2], [0.6, 0.6]) == pytest.approx(-0.4)  # a hint can hurt
    with pytest.raises(ValueError, match="matched plays: 3 hinted vs 2 unhinted"):
        regret([1.0, 1.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="at least one play"):
        regret([], [])


def test_win_rate_counts_solved_plays() -> None:
    assert win_rate([1.0, 0.9, 0.0, 1.0]) == 0.5
    assert win_rate([0.9, 0.4], success=0.9) == 0.5


@pytest.mark.parametrize(
    ("w", "expected"),
    [
        (0.5, 1.0),
        (0.4, 1.0),
        (0.6, 1.0),
        (0.3, 0.6),  # 1 - 0.1 / 0.25
        (0.7, 0.6),
        (0.2, 0.2),  # 1 - 0.2 / 0.25
        (0.15, 0.0),
        (0.0, 0.0),
        (1.0, 0.0),
    ],
)
def test_plateau(w: float, expected: float) -> None:
    assert plateau(w) == pytest.approx(expected)
    assert solve_rate_reward(w) == pytest.approx(expected)


def test_plateau_rejects_a_win_rate_outside_unit_interval() -> None:
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="win rate must lie in"):
            plateau(bad)


@pytest.mark.parametrize(
    ("w", "r", "expected"),
    [
        (0.3, 0.06, 0.52),  # 0.6·0.6 + 0.4·(0.06/0.15 = 0.4)
        (0.5, 0.15, 1.0),
        (0.5, 0.45, 1.0),  # the regret term saturates
        (0.5, -0.2, 0.6),  # negative regret clips to 0
        (0.9, 0.03, 0.08),  # 0.6·0 + 0.4·0.2
        (0.05, 0.0, 0.0),
    ],
)
def test_blend(w: float, r: float, expected: float) -> None:
    assert blend(w, r) == pytest.approx(expected)
    assert designer_reward("blend", win_rate=w, regret=r) == pytest.approx(expected)


def test_regret_terms() -> None:
    assert regret_score(0.075) == pytest.approx(0.5)
    assert regret_reward(-0.3) == -0.3
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        regret_reward(1.5)


def test_learning_potential_and_skill_ema() -> None:
    assert learning_potential(0.7, 0.5) == pytest.approx(0.2)
    ema = SkillEMA(alpha=0.5)
    assert ema.reward("algebra", 0.2) == 0.0  # no history yet
    assert ema.get("algebra") == pytest.approx(0.2)
    assert ema.reward("algebra", 0.6) == pytest.approx(0.4)  # |0.6 − 0.2|
    assert ema.get("algebra") == pytest.approx(0.4)  # 0.5·0.2 + 0.5·0.6
    assert ema.get("logic") is None  # skills are tracked apart
    with pytest.raises(ValueError, match="alpha"):
        SkillEMA(alpha=0.0)


def test_designer_reward_dispatch() -> None:
    assert set(DESIGNER_REWARDS) == {"blend", "regret", "solve_rate", "learning_potential"}
    assert designer_reward("regret", regret=0.1) == pytest.approx(0.1)
    assert designer_reward("solve_rate", win_rate=0.3) == pytest.approx(0.6)
    assert designer_reward("learning_potential", win_rate=0.3, slow_ema=0.55) == pytest.approx(0.25)
    narrow = DesignerRewardConfig(plateau_low=0.45, plateau_high=0.55, plateau_width=0.1)
    assert designer_reward("solve_rate", win_rate=0.4, config=narrow) == pytest.approx(0.5)


def test_invalid_env_gets_no_reward_or_the_configured_penalty() -> None:
    assert designer_reward("blend", valid=False) is None
    penalty = DesignerRewardConfig(invalid_penalty=-0.5)
    assert designer_reward("blend", valid=False, config=penalty) == -0.5


def test_designer_reward_errors() -> None:
    with pytest.raises(ValueError, match="unknown designer reward 'minimax'"):
        designer_reward("minimax", win_rate=0.5, regret=0.1)
    with pytest.raises(ValueError, match="'blend' needs regret"):
        designer_reward("blend", win_rate=0.5)
    with pytest.raises(ValueError, match="'learning_potential' needs slow_ema"):
        designer_reward("learning_potential", win_rate=0.5)
