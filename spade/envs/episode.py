"""The episode rules every player of a sandboxed env follows: one turn cap, one "solved".

The env checks, the reference scores, suite evaluation and self-play rollouts all step envs
through `EnvEpisode`, so they agree on when an episode is over and what it scored:

- an episode runs until the env says `terminated` or `truncated`, or until the turn cap:
  the env's own `max_turns`, else `DEFAULT_TURN_CAP` (reaching our cap is a truncation
  from outside the task, `capped`);
- `step()` is never called on an episode that has ended (gymnasium leaves that undefined);
- the return is the last step's reward (the contract: reward is progress so far), and an
  episode is solved when it terminated with reward 1.0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from spade.envs.remote import EnvSpec, StepResult

DEFAULT_TURN_CAP = 30
"""Agent turns allowed in an env that declares no `max_turns`."""


def is_solved(terminated: bool, reward: float) -> bool:
    """The one success rule: the env ended the episode itself with full reward."""
    return terminated and reward >= 1.0


def turn_cap(max_turns: int | None, override: int | None = None) -> int:
    """Turns an episode may take: `override`, else the env's `max_turns`, else the default."""
    return override or max_turns or DEFAULT_TURN_CAP


class EnvHandle(Protocol):
    """What an episode needs of an env: `RemoteEnv` (sandboxed env code), its Ray proxy, or
    an in-process env of spade's own (`spade.procedural`)."""

    @property
    def spec(self) -> EnvSpec: ...

    def load(self) -> list[str]: ...

    def reset(
        self, seed: int | None = None, difficulty: int | None = None
    ) -> tuple[str, dict[str, Any]]: ...

    def step(self, action: str) -> StepResult: ...

    def solution(self) -> list[str]: ...

    def state(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class EpisodeOver(RuntimeError):
    """`step()` was asked of an episode that has already ended."""


@dataclass
class EnvEpisode:
    """One episode of a sandboxed env, stepped under the rules above.

    Sandbox and env errors propagate to the caller (a broken env is the caller's verdict to
    make: a check failure, a failed play, ...).
    """

    env: EnvHandle
    cap_override: int | None = None
    difficulty: int | None = None
    """The level every reset asks for (None: the env's default, its top level)."""
    seed: int | None = None
    cap: int = DEFAULT_TURN_CAP
    observations: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    steps: list[StepResult] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False
    """The env itself truncated the episode."""
    capped: bool = False
    """Our turn cap ended the episode (a limit outside the task)."""

    def reset(self, seed: int | None) -> str:
        observation, _ = self.env.reset(seed, self.difficulty)
        self.seed = seed
        self.cap = turn_cap(self.env.spec.max_turns, self.cap_override)
        self.observations = [observation]
        self.actions, self.steps = [], []
        self.terminated = self.truncated = self.capped = False
        return observation

    def step(self, action: str) -> StepResult:
        if self.over:
            raise EpisodeOver(f"episode on seed {self.seed} has ended; reset() first")
        result = self.env.step(action)
        self.actions.append(action)
        self.steps.append(result)
        self.observations.append(result.observation)
        self.terminated, self.truncated = result.terminated, result.truncated
        self.capped = not (result.terminated or result.truncated) and len(self.steps) >= self.cap
        return result

    @property
    def over(self) -> bool:
        return self.terminated or self.truncated or self.capped

    @property
    def rewards(self) -> list[float]:
        return [s.reward for s in self.steps]

    @property
    def final_reward(self) -> float:
        """The contract's return: the last step's reward (progress so far), 0 before any."""
        return self.steps[-1].reward if self.steps else 0.0

    @property
    def solved(self) -> bool:
        return is_solved(self.terminated, self.final_reward)


def play_actions(
    env: EnvHandle,
    seed: int | None,
    actions: Iterable[str] | Callable[[str], str | None],
    cap: int | None = None,
    difficulty: int | None = None,
) -> EnvEpisode:
    """Reset on `seed` (at level `difficulty`) and play `actions` (a list, or a function from
    the latest observation to the next action, None to stop) until the episode ends or they
    run out."""
    episode = EnvEpisode(env, cap, difficulty)
    observation = episode.reset(seed)
    if callable(actions):
        while not episode.over and (action := actions(observation)) is not None:
            observation = episode.step(action).observation
        return episode
    for action in actions:
        if episode.over:
            break
        episode.step(action)
    return episode
