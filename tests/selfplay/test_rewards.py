"""Regret and designer rewards against hand-computed values, on the plays they are read from."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from spade.rollout import Episode
from spade.selfplay.agent_step import EnvPlays, PlayableEnv
from spade.selfplay.config import RewardConfig
from spade.selfplay.rewards import (
    DESIGNER_REWARDS,
    NEEDS_REGRET,
    DesignOutcome,
    SkillEMA,
    designer_reward,
    groups_with_signal,
    plateau,
    regret,
    regret_score,
)

DEFAULT = RewardConfig()


def plays(unhinted: list[float], hinted: list[float]) -> EnvPlays:
    """An env's plays whose episodes ended (terminated) with these final rewards; a final
    reward of 1 is a solved play."""

    def episodes(finals: list[float], hint: str | None) -> list[Episode]:
        return [
            Episode("k", seed, hint, rewards=[r], terminated=True) for seed, r in enumerate(finals)
        ]

    env = PlayableEnv("env", "", "a hint", "game", "search")
    seeds = list(range(len(unhinted)))
    return EnvPlays(env, seeds, episodes(unhinted, None), episodes(hinted, "a hint"))


def reward(kind: str, outcome: DesignOutcome | None, **constants: float) -> float | None:
    return designer_reward(outcome, RewardConfig(kind=kind, **constants))


def test_regret_is_mean_hinted_minus_mean_unhinted() -> None:
    assert regret([1.0, 1.0, 0.0, 0.5], [0.0, 1.0, 0.0, 0.5]) == pytest.approx(0.25)
    assert regret([0.2, 0.2], [0.6, 0.6]) == pytest.approx(-0.4)  # a hint can hurt
    with pytest.raises(ValueError, match="matched plays: 3 hinted vs 2 unhinted"):
        regret([1.0, 1.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="at least one play"):
        regret([], [])


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
def test_plateau_and_the_solve_rate_reward(w: float, expected: float) -> None:
    band = (DEFAULT.plateau_low, DEFAULT.plateau_high, DEFAULT.plateau_width)
    assert band == (0.4, 0.6, 0.25)
    assert plateau(w, *band) == pytest.approx(expected)
    assert reward("solve_rate", DesignOutcome(w)) == pytest.approx(expected)


def test_plateau_rejects_a_win_rate_outside_unit_interval() -> None:
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="win rate must lie in"):
            plateau(bad, 0.4, 0.6, 0.25)


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
def test_blend_is_the_default(w: float, r: float, expected: float) -> None:
    assert DEFAULT.kind == "blend"
    assert designer_reward(DesignOutcome(w, r), DEFAULT) == pytest.approx(expected)


def test_regret_terms() -> None:
    assert regret_score(0.075, DEFAULT.regret_scale) == pytest.approx(0.5)
    assert reward("regret", DesignOutcome(0.5, -0.3)) == -0.3  # raw: a hint that hurts costs
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        reward("regret", DesignOutcome(0.5, 1.5))


def test_learning_potential_against_the_skill_s_slow_ema() -> None:
    assert reward("learning_potential", DesignOutcome(0.7, None, 0.5)) == pytest.approx(0.2)
    # A skill's first env: no average yet, nothing learnt to measure.
    assert reward("learning_potential", DesignOutcome(0.7)) == 0.0
    with pytest.raises(ValueError, match="slow EMA must lie in"):
        reward("learning_potential", DesignOutcome(0.7, None, 1.2))


def test_skill_ema() -> None:
    ema = SkillEMA(alpha=0.5)
    assert ema.update("algebra", 0.2) == pytest.approx(0.2)  # the first observation starts it
    assert ema.update("algebra", 0.6) == pytest.approx(0.4)  # 0.5·0.2 + 0.5·0.6
    assert ema.get("logic") is None  # skills are tracked apart
    assert SkillEMA(DEFAULT.ema_alpha).alpha == 0.05
    with pytest.raises(ValueError, match="alpha"):
        SkillEMA(alpha=0.0)


def test_each_reward_on_hand_computed_plays() -> None:
    # Without the hint: 1 of 4 solved (w = 0.25), returns 1, 0.5, 0, 0 (mean 0.375); with it
    # returns 1, 1, 0.5, 0 (mean 0.625): regret 0.25. The skill's slow EMA was 0.5.
    outcome = DesignOutcome.of(plays([1.0, 0.5, 0.0, 0.0], [1.0, 1.0, 0.5, 0.0]), 0.5)
    assert (outcome.win_rate, outcome.regret) == (0.25, pytest.approx(0.25))
    expected = {
        "blend": 0.6 * 0.4 + 0.4 * 1.0,  # plateau(0.25) = 1 − 0.15/0.25; 0.25/0.15 clips to 1
        "regret": 0.25,
        "solve_rate": 0.4,
        "learning_potential": 0.25,  # |0.25 − 0.5|
    }
    assert set(expected) == set(DESIGNER_REWARDS)
    for kind, value in expected.items():
        assert reward(kind, outcome) == pytest.approx(value), kind
    # Every constant is read from the config: a band [0.2, 0.3] holds w fully, and a regret
    # scale of 0.5 scores 0.25 as half.
    narrow = {"plateau_low": 0.2, "plateau_high": 0.3, "plateau_width": 0.1}
    assert reward("solve_rate", outcome, **narrow) == 1.0
    weights = {"w_plateau": 0.5, "w_regret": 0.5, "regret_scale": 0.5}
    assert reward("blend", outcome, **narrow, **weights) == pytest.approx(0.5 + 0.5 * 0.5)
    assert reward("solve_rate", DesignOutcome(0.45), **narrow) == pytest.approx(0.0)


@pytest.mark.parametrize(
    "hinted",
    [
        pytest.param(lambda solved: solved, id="hint-no-help"),
        pytest.param(lambda solved: min(4, solved + 1), id="hint-solves-one-more"),
        pytest.param(lambda solved: 4, id="hint-solves-all"),
    ],
)
def test_the_default_blend_ranks_the_frontier_above_too_hard_and_too_easy(
    hinted: Callable[[int], int],
) -> None:
    """Four designs whose no-hint win rates are 0, 0.25, 0.5 and 1 (4 plays each): the one
    the agent solves half the time earns most, above the one it never solves and the one it
    always solves, and 0.25 earns more than 0, however much the hint helps."""
    rewards = {}
    for solved in (0, 1, 2, 4):
        with_hint = hinted(solved)
        unhinted = [1.0] * solved + [0.0] * (4 - solved)
        result = plays(unhinted, [1.0] * with_hint + [0.0] * (4 - with_hint))
        rewards[result.win_rate] = designer_reward(DesignOutcome.of(result), DEFAULT)
    assert sorted(rewards) == [0.0, 0.25, 0.5, 1.0]
    assert rewards[0.5] > rewards[0.0] and rewards[0.5] > rewards[1.0]
    assert rewards[0.25] > rewards[0.0]


def test_the_rewards_that_read_regret_are_the_ones_that_need_hinted_plays() -> None:
    unhinted_only = DesignOutcome(0.5, None, 0.5)  # an env played without its hint
    for kind, reward_fn in DESIGNER_REWARDS.items():
        config = RewardConfig(kind=kind)
        if kind in NEEDS_REGRET:
            with pytest.raises(ValueError, match="needs regret"):
                reward_fn(unhinted_only, config)
        else:
            assert math.isfinite(reward_fn(unhinted_only, config))
    assert NEEDS_REGRET.issubset(DESIGNER_REWARDS)


def test_invalid_env_gets_no_reward_or_the_configured_penalty() -> None:
    for kind in DESIGNER_REWARDS:
        assert reward(kind, None) is None
        assert reward(kind, None, invalid_penalty=-0.5) == -0.5


def test_an_unknown_reward_is_refused() -> None:
    unchecked = RewardConfig.model_construct(kind="minimax")  # past the config's own check
    with pytest.raises(ValueError, match="unknown designer reward 'minimax'; use one of blend"):
        designer_reward(DesignOutcome(0.5, 0.1), unchecked)


@pytest.mark.parametrize(
    ("groups", "share"),
    [
        ({"a": [0.1, 0.2]}, 1.0),
        ({"a": [-0.2, 0.4]}, 1.0),  # a penalised invalid design against a valid one
        ({"a": [0.3]}, 0.0),  # one design: nothing to compare
        ({"a": [None, None]}, 0.0),  # all invalid, no penalty: no samples
        ({"a": [0.5, None]}, 0.0),  # one valid design left: advantage 0
        ({"a": [0.0, 0.0, 0.0]}, 0.0),  # all equal: centred advantages are 0
        ({"a": [0.0, 0.0], "b": [0.0, 0.4], "c": [None], "d": [0.1, 0.1, 0.2]}, 0.5),
    ],
)
def test_groups_with_signal(groups: dict[str, list[float | None]], share: float) -> None:
    assert groups_with_signal(groups) == share


def test_no_groups_is_no_measure() -> None:
    assert math.isnan(groups_with_signal({}))  # nothing designed (fixed mode): a gap


def test_success_near_zero_everywhere_leaves_no_designer_signal() -> None:
    """The issue's case: every design's plays fail with and without the hint, so the blend
    is 0 for each and no group carries signal; one design at the frontier brings it back."""
    failing = DesignOutcome.of(plays([0.0] * 4, [0.0] * 4))
    frontier = DesignOutcome.of(plays([1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]))
    stuck = {g: [designer_reward(failing, DEFAULT)] * 2 for g in ("design/0", "design/1")}
    assert stuck == {"design/0": [0.0, 0.0], "design/1": [0.0, 0.0]}
    assert groups_with_signal(stuck) == 0.0
    stuck["design/1"][1] = designer_reward(frontier, DEFAULT)
    assert groups_with_signal(stuck) == 0.5
