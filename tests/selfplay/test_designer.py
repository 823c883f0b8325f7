"""Why the designer's code extraction found no env: the failure a repair prompt is fed."""

from __future__ import annotations

import pytest

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
