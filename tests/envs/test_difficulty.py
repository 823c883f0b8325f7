"""The difficulty contract (levels taken at reset) and the check against free partial credit,
on the real sandbox."""

import pytest

from spade.envs import validate_source
from spade.envs.episode import play_actions
from spade.envs.remote import RemoteEnv
from spade.sandbox import EnvCallError
from tests.envs.sources import (
    DEFAULT_NOT_TOP,
    GOOD_TEXT,
    IGNORED_LEVELS,
    LEVELLED_TEXT,
    PAYS_FOR_NOTHING,
    SOLVED_BY_NOTHING,
)


def _check(source: str, name: str):
    report = validate_source(source)
    return report, next(c for c in report.checks if c.name == name)


def test_a_levelled_env_is_valid_and_its_levels_are_reported() -> None:
    report, levels = _check(LEVELLED_TEXT, "difficulty_levels")
    assert report.valid, report.failed()
    expected = "3 levels; from level 0 to 2: solutions 2.0 -> 2.0 actions (18 -> 22 chars)"
    assert levels.detail.startswith(expected)


def test_a_level_sets_the_episode_and_its_turn_budget() -> None:
    with RemoteEnv(LEVELLED_TEXT) as env:
        assert env.spec.levels == 3 and env.spec.max_turns == 40
        env.reset(7, 0)
        assert env.spec.max_turns == 4 and len(env.solution()[1]) == len("\\boxed{0}")
        episode = play_actions(env, 7, ["\\boxed{5}"] * 10, difficulty=0)
        assert len(episode.steps) <= 4  # the level's budget, not the declared 40
        env.reset(7)  # no level: the top one
        assert env.spec.max_turns == 40 and len(env.solution()[1]) == len("\\boxed{000}")


def test_a_level_outside_the_declared_ones_is_a_contract_error() -> None:
    with RemoteEnv(LEVELLED_TEXT) as env, pytest.raises(EnvCallError, match="levels 0..2"):
        env.reset(1, 3)
    with RemoteEnv(GOOD_TEXT) as env, pytest.raises(EnvCallError, match="levels 0..0"):
        env.reset(1, 1)


def test_an_env_without_levels_reports_one() -> None:
    report, levels = _check(GOOD_TEXT, "difficulty_levels")
    assert report.valid and levels.detail.startswith("one level")


@pytest.mark.parametrize(
    ("source", "says"),
    [(IGNORED_LEVELS, "levels 0-1, 1-2 give the same task and solution"),
     (DEFAULT_NOT_TOP, "not the top level 2")],
    ids=["ignored", "default-not-top"],
)  # fmt: skip
def test_levels_that_do_not_differ_fail(source: str, says: str) -> None:
    report, levels = _check(source, "difficulty_levels")
    assert not report.valid and not levels.passed
    assert says in levels.detail


def test_an_env_that_pays_for_nothing_is_refused() -> None:
    report, check = _check(PAYS_FOR_NOTHING, "no_free_credit")
    assert not report.valid and not check.passed
    assert "no-op play scores 0.600" in check.detail and "0.5 x the solution" in check.detail
    assert [c.name for c in report.failed()] == ["no_free_credit"]


def test_an_env_solved_by_saying_nothing_is_refused() -> None:
    report, check = _check(SOLVED_BY_NOTHING, "no_free_credit")
    assert not check.passed and "solves the episode" in check.detail


def test_free_credit_is_checked_at_every_level() -> None:
    # Only level 0 pays for an unreadable guess: the top level alone would pass.
    pays_at_level_0 = '"Invalid guess.", 0.9 if len(self.code) == 1 else 0.0, False,'
    source = LEVELLED_TEXT.replace('"Invalid guess.", 0.0, False,', pays_at_level_0)
    report, check = _check(source, "no_free_credit")
    assert not check.passed and check.detail.startswith("level 0: no-op play scores 0.900")
