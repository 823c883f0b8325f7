"""Reference scores: how the env's own solution() and a random agent do on given seeds.

An episode's return is the reward of its last step (the contract); it counts as solved when
that step has reward 1.0 and terminated=True. Both players run against the sandboxed env.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from spade.envs.checks import DEFAULT_TURN_CAP
from spade.envs.remote import EnvLoadError, RemoteEnv
from spade.sandbox import SandboxConfig, SandboxError
from spade.suites.manifest import ReferenceScores
from spade.suites.random_agent import RANDOM_AGENT, RandomAgent, agent_seed


class PlayError(Exception):
    """The env broke (raised, hung, crashed) while a reference player was playing it."""


@dataclass(frozen=True)
class Episode:
    seed: int
    final_reward: float
    solved: bool
    steps: int


def play_solution(env: RemoteEnv, seed: int) -> Episode:
    """Play the env's own solution() for `seed`."""
    try:
        env.reset(seed)
        return _play(env, seed, iter(env.solution()).__next__)
    except (SandboxError, EnvLoadError) as exc:
        raise PlayError(f"solution on seed {seed}: {exc}") from None


def play_random(env: RemoteEnv, seed: int) -> Episode:
    """Play one episode of the seeded random agent on `seed`."""
    try:
        agent = RandomAgent(agent_seed(seed), env.spec.tools)
        observation, _ = env.reset(seed)
        agent.begin(observation)
        return _play(env, seed, agent.act)
    except (SandboxError, EnvLoadError) as exc:
        raise PlayError(f"random agent on seed {seed}: {exc}") from None


def _play(env: RemoteEnv, seed: int, next_action: Callable[[], str]) -> Episode:
    cap = env.spec.max_turns or DEFAULT_TURN_CAP
    reward, terminated, steps = 0.0, False, 0
    while steps < cap:
        try:
            action = next_action()
        except StopIteration:  # the solution ran out of actions
            break
        result = env.step(action)
        steps += 1
        reward, terminated = result.reward, result.terminated
        if result.terminated or result.truncated:
            break
    return Episode(seed, reward, terminated and reward == 1.0, steps)


def reference_scores(env: RemoteEnv, seeds: list[int]) -> ReferenceScores:
    """Mean returns of solution() and the random agent over `seeds`; raises `PlayError`."""
    solutions = [play_solution(env, seed) for seed in seeds]
    randoms = [play_random(env, seed) for seed in seeds]
    return ReferenceScores(
        solution_return=_mean([e.final_reward for e in solutions]),
        random_return=_mean([e.final_reward for e in randoms]),
        random_success_rate=_mean([1.0 if e.solved else 0.0 for e in randoms]),
        random_agent=RANDOM_AGENT,
    )


def score_source(
    source: str, filename: str, seeds: list[int], config: SandboxConfig | None = None
) -> ReferenceScores:
    """`reference_scores` for an env source, in a sandboxed worker of its own."""
    with RemoteEnv(source, filename, config) as env:
        return reference_scores(env, seeds)


def unsolved_seeds(env: RemoteEnv, seeds: list[int]) -> list[tuple[int, float]]:
    """(seed, final reward) for each seed on which solution() does not reach 1.0."""
    episodes = [play_solution(env, seed) for seed in seeds]
    return [(e.seed, e.final_reward) for e in episodes if not e.solved]


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 6) if values else 0.0
