"""A Reasoning-Gym task as a multi-turn env: attempts with the task's own verifier as feedback.

reset(seed, difficulty) draws item `seed` of the task at that curriculum level; the agent
answers `\\boxed{ANSWER}`; a correct answer (the task's `score_answer` gives 1.0) ends the
episode with reward 1.0. A wrong one is answered with the verifier's score and the episode
goes on until the stated attempts run out (terminated, reward 0). Reward is binary, as RLVE
found as good as shaped reward at small scale, and it pays nothing for a well-formed wrong
answer (several Reasoning-Gym scorers give 0.01-0.05 for one).

The env runs in this process (no sandbox): its code is spade's and Reasoning-Gym's, and an
answer is only ever compared, never run (`levels.unsafe_scorer` keeps out the tasks whose
scorer evaluates text).
"""

from __future__ import annotations

from typing import Any

from spade.envs.remote import EnvSpec, StepResult
from spade.procedural.levels import TaskError, curriculum_levels, dataset, unsafe_scorer

MAX_LEVELS = 5
"""Levels a procedural env offers: the curriculum's first five (or all it has)."""
PROCEDURAL_PREFIX = "rg:"
"""Env keys of procedural envs: `rg:TASK`."""


def boxed_answer(text: str) -> str | None:
    """The content of the last `\\boxed{...}` in `text`, braces inside it balanced."""
    start = text.rfind("\\boxed{")
    while start != -1:
        depth = 0
        for i in range(start + len("\\boxed"), len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                return text[start + len("\\boxed{") : i].strip()
        start = text.rfind("\\boxed{", 0, start)  # unclosed: try an earlier one
    return None


class ProceduralEnv:
    """Task `task` of Reasoning-Gym with `attempts` answers an episode, at the first `levels`
    levels of its curriculum (default: up to `MAX_LEVELS`; fewer where the higher ones make
    prompts too long for a small model or items too slow to generate)."""

    def __init__(self, task: str, attempts: int = 3, levels: int | None = None) -> None:
        why = unsafe_scorer(task)
        if why:
            raise TaskError(f"reasoning-gym task {task!r} cannot be a procedural env: {why}")
        available = curriculum_levels(task)
        if levels is not None and not 1 <= levels <= available:
            raise TaskError(f"reasoning-gym task {task!r} has {available} levels, not {levels}")
        self.task = task
        self.attempts = attempts
        levels = levels or min(MAX_LEVELS, available)
        self.spec = EnvSpec(self.key, None, {"kind": "reasoning", "skill": task}, attempts, levels)
        self.level: int | None = None
        self._entry: dict[str, Any] | None = None
        self._score: Any = None
        self._used = 0
        self._over = False

    @property
    def key(self) -> str:
        return f"{PROCEDURAL_PREFIX}{self.task}"

    def load(self) -> list[str]:
        return [self.spec.class_name]

    def reset(
        self, seed: int | None = None, difficulty: int | None = None
    ) -> tuple[str, dict[str, Any]]:
        level = self.spec.levels - 1 if difficulty is None else difficulty
        if not 0 <= level < self.spec.levels:
            raise TaskError(
                f"{self.key}: difficulty {level} is not one of its levels 0..{self.spec.levels - 1}"
            )
        items = dataset(self.task, level)
        self._entry = items[(seed or 0) % items.size]
        self._score = items.score_answer
        self._used, self._over = 0, False
        self.level = level
        question = str(self._entry["question"]).strip()
        rules = (
            f"Give your answer as \\boxed{{ANSWER}}. You have {self.attempts} attempts; "
            "after a wrong one you are told so and may answer again."
        )
        return f"{question}\n\n{rules}", {"task": self.task, "level": level}

    def step(self, action: str) -> StepResult:
        if self._entry is None or self._over:
            raise RuntimeError(f"{self.key}: reset() before step(), and never after the end")
        self._used += 1
        left = self.attempts - self._used
        answer = boxed_answer(action)
        if answer is None:
            feedback = "No answer found: write it as \\boxed{ANSWER}."
        else:
            score = float(self._score(answer, self._entry))
            if score >= 1.0:
                self._over = True
                return StepResult("Correct.", 1.0, True, False, {"score": score})
            feedback = f"{answer!r} is not correct (the checker scored it {score:.2f} of 1)."
        self._over = left <= 0
        tail = "No attempts left." if self._over else f"{left} attempt(s) left."
        return StepResult(f"{feedback} {tail}", 0.0, self._over, False, {})

    def solution(self) -> list[str]:
        if self._entry is None:
            raise RuntimeError(f"{self.key}: reset() before solution()")
        return [f"\\boxed{{{self._entry['answer']}}}"]

    def state(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "level": self.level,
            "answer": None if self._entry is None else self._entry["answer"],
        }

    def close(self) -> None:
        self._entry = None

    def __enter__(self) -> ProceduralEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
