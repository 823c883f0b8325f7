"""Reasoning-Gym tasks as multi-turn envs: the env contract, the validator's verdict on the
shipped pool, the attempt rules, and the tasks kept out."""

from __future__ import annotations

import pytest

from spade.envs.checks import CHECK_NAMES, validate_env
from spade.envs.episode import play_actions
from spade.procedural import POOL_TASKS, ProceduralEnv, TaskError, boxed_answer, unsafe_scorer


@pytest.mark.parametrize(
    ("text", "answer"),
    [("so \\boxed{42}", "42"), ("\\boxed{1} then \\boxed{ 2 }", "2"),
     ("\\boxed{{a: {b}}}", "{a: {b}}"), ("\\boxed{x} \\boxed{unclosed", "x"),
     ("no box", None), ("\\boxed{\n1 2\n3 4\n}", "1 2\n3 4")],
)  # fmt: skip
def test_the_answer_is_the_last_closed_box(text: str, answer: str | None) -> None:
    assert boxed_answer(text) == answer


@pytest.mark.parametrize(("task", "levels"), sorted(POOL_TASKS.items()))
def test_every_pool_task_passes_every_check_at_every_level(task: str, levels: int) -> None:
    with ProceduralEnv(task, levels=levels) as env:
        report = validate_env(env)
    assert report.valid, [f"{c.name}: {c.detail}" for c in report.failed()]
    assert [c.name for c in report.checks] == list(CHECK_NAMES)
    assert report.difficulty_levels == levels


def test_a_wrong_answer_gets_the_verifier_s_feedback_until_the_attempts_run_out() -> None:
    env = ProceduralEnv("family_relationships", attempts=2)
    observation, info = env.reset(5, 0)
    assert "You have 2 attempts" in observation and info == {"task": "family_relationships",
                                                               "level": 0}  # fmt: skip
    first = env.step("I think \\boxed{zebra}")
    assert (first.reward, first.terminated) == (0.0, False)
    assert "'zebra' is not correct" in first.observation
    assert "1 attempt(s) left" in first.observation
    last = env.step("no box at all")
    assert (last.reward, last.terminated, last.truncated) == (0.0, True, False)
    assert "No answer found" in last.observation and "No attempts left" in last.observation


def test_the_reference_answer_solves_and_levels_change_the_item() -> None:
    env = ProceduralEnv("path_star")
    easy, _ = env.reset(11, 0)
    assert play_actions(env, 11, env.solution(), difficulty=0).solved
    hard, _ = env.reset(11, 3)
    assert play_actions(env, 11, env.solution(), difficulty=3).solved
    assert len(hard) > len(easy)
    default, _ = env.reset(11)
    assert default == hard  # no level: the top one


def test_tasks_whose_scorer_evaluates_text_are_refused() -> None:
    assert unsafe_scorer("countdown") == "its module calls parse_expr()"
    assert unsafe_scorer("maze") is None  # a module that only uses re.compile
    with pytest.raises(TaskError, match="countdown.*cannot be a procedural env"):
        ProceduralEnv("countdown")
    assert all(unsafe_scorer(task) is None for task in POOL_TASKS)


@pytest.mark.parametrize(
    ("task", "levels", "says"),
    [("no_such_task", None, "has no task"), ("acre", None, "no curriculum"),
     ("maze", 9, "has 4 levels, not 9")],
)  # fmt: skip
def test_a_bad_task_or_level_count_is_a_one_line_error(
    task: str, levels: int | None, says: str
) -> None:
    with pytest.raises(TaskError, match=says):
        ProceduralEnv(task, levels=levels)


def test_a_level_outside_the_env_s_is_an_error() -> None:
    with pytest.raises(TaskError, match="levels 0..1"):
        ProceduralEnv("maze", levels=2).reset(0, 2)
