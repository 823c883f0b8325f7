"""Reference scores: how the env's own solution() and a random agent do on given seeds.

Both players run against the sandboxed env under the episode rules of `spade.envs.episode`
(turn cap, never a step after the end): an episode's return is the reward of its last step,
and it is solved by the one rule `is_solved` (terminated with reward 1.0).
"""

from __future__ import annotations

from dataclasses import dataclass

from spade.envs.episode import EnvEpisode, play_actions
from spade.envs.random_agent import RANDOM_AGENT, random_policy
from spade.envs.remote import EnvLoadError, RemoteEnv
from spade.sandbox import SandboxConfig, SandboxError
from spade.suites.manifest import ReferenceScores


class PlayError(Exception):
    """The env broke (raised, hung, crashed) while a reference player was playing it."""


@dataclass(frozen=True)
class Episode:
    seed: int
    final_reward: float
    solved: bool
    steps: int

    @classmethod
    def of(cls, episode: EnvEpisode, seed: int) -> Episode:
        return cls(seed, episode.final_reward, episode.solved, len(episode.steps))


def play_solution(env: RemoteEnv, seed: int) -> Episode:
    """Play the env's own solution() for `seed`."""
    try:
        env.reset(seed)  # the contract: solution() is called right after reset(seed)
        return Episode.of(play_actions(env, seed, env.solution()), seed)
    except (SandboxError, EnvLoadError) as exc:
        raise PlayError(f"solution on seed {seed}: {exc}") from None


def play_random(env: RemoteEnv, seed: int) -> Episode:
    """Play one episode of the seeded random agent on `seed`."""
    try:
        return Episode.of(play_actions(env, seed, random_policy(seed, env.spec.tools)), seed)
    except (SandboxError, EnvLoadError) as exc:
        raise PlayError(f"random agent on seed {seed}: {exc}") from None


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
