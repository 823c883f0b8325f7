"""RLVE's difficulty ceiling: promotion, demotion, the levels drawn, and its saved state."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from spade.procedural import LevelScheduler, SchedulerConfig


def _play(scheduler: LevelScheduler, key: str, results: list[bool], level: int) -> int:
    ceiling = -1
    for solved in results:
        ceiling = scheduler.record(key, level, solved)
    return ceiling


def test_a_ceiling_rises_once_its_window_is_solved_often_enough() -> None:
    scheduler = LevelScheduler(SchedulerConfig(window=4, promote_at=0.75))
    scheduler.ceiling("env", levels=3)
    assert _play(scheduler, "env", [True, True, False], 0) == 0  # window not full yet
    assert _play(scheduler, "env", [True], 0) == 1  # 3 of 4 = 0.75
    assert _play(scheduler, "env", [True, False, False, True], 1) == 1  # 0.5: stays
    assert _play(scheduler, "env", [True] * 4, 1) == 2
    assert _play(scheduler, "env", [True] * 8, 2) == 2  # the top level is the last


def test_plays_below_the_ceiling_do_not_count() -> None:
    scheduler = LevelScheduler(SchedulerConfig(window=2, promote_at=0.5))
    scheduler.ceiling("env", levels=5)
    _play(scheduler, "env", [True, True], 0)
    assert _play(scheduler, "env", [True] * 10, 0) == 1  # level 0 is now below the ceiling
    assert scheduler.ceilings["env"].recent == []


def test_demotion_only_when_configured() -> None:
    rlve = LevelScheduler(SchedulerConfig(window=2, start=2))
    rlve.ceiling("env", levels=5)
    assert _play(rlve, "env", [False] * 6, 2) == 2
    demoting = LevelScheduler(SchedulerConfig(window=2, start=2, demote_below=0.0))
    demoting.ceiling("env", levels=5)
    assert _play(demoting, "env", [False, True], 2) == 2
    assert _play(demoting, "env", [False, False], 2) == 1
    assert _play(demoting, "env", [False, False], 1) == 0
    assert _play(demoting, "env", [False, False], 0) == 0


def test_levels_are_drawn_from_the_span_at_and_below_the_ceiling() -> None:
    scheduler = LevelScheduler(SchedulerConfig(span=2, start=3))
    rng = random.Random(0)
    drawn = {scheduler.sample("env", 5, rng) for _ in range(200)}
    assert drawn == {2, 3}
    assert {scheduler.sample("small", 2, rng) for _ in range(50)} == {0, 1}  # start capped


def test_the_state_round_trips_through_json() -> None:
    config = SchedulerConfig(window=3)
    scheduler = LevelScheduler(config)
    scheduler.ceiling("a", 4)
    _play(scheduler, "a", [True, True, True, True], 0)
    restored = LevelScheduler.from_json(scheduler.to_json(), config)
    assert restored.levels() == {"a": 1} and restored.to_json() == scheduler.to_json()


def test_a_demotion_threshold_above_promotion_is_refused() -> None:
    with pytest.raises(ValidationError, match="demote_below must be below promote_at"):
        SchedulerConfig(promote_at=0.5, demote_below=0.6)
