"""Why the designer's code extraction found no env: the failure a repair prompt is fed."""

from __future__ import annotations

import random

import pytest

from spade.selfplay.design_step import balanced_kinds
from spade.selfplay.designer import code_problem, extract_code


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("I would write a maze game.", "no_code:"),
        ("```python\nclass MazeEnv:\n    def reset(self, seed=None:\n```", "syntax_error: line 2"),
        ("Here:\n```python\nclass MazeEnv:\n    def reset(self", "the reply was cut off"),
        ("```python\nclass Maze:\n    pass\n```", "no_env_class:"),
    ],
)
def test_code_problem_says_why_no_env_was_found(reply: str, problem: str) -> None:
    assert extract_code(reply) is None
    assert problem in code_problem(reply)


@pytest.mark.parametrize(("kinds", "count"), [(["game", "reasoning"], 2), (["game", "reasoning",
                         "tool_use"], 7), (["game"], 3)])  # fmt: skip
def test_request_kinds_are_balanced_within_an_iteration(kinds: list[str], count: int) -> None:
    for seed in range(50):
        drawn = balanced_kinds(kinds, count, random.Random(seed))
        assert len(drawn) == count
        tally = [drawn.count(kind) for kind in kinds]
        assert max(tally) - min(tally) <= 1, drawn
    orders = {tuple(balanced_kinds(kinds, count, random.Random(s))) for s in range(50)}
    assert len(orders) == 1 if len(kinds) == 1 else len(orders) > 1  # still drawn, per seed
