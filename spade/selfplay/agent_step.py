"""One agent step: play each env K times without the hint and K times with it, on the same
seeds, and turn the plays into win rates, regret and agent training samples."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from spade.envs.remote import RemoteEnv
from spade.evals.samples import GenerationSettings, Responder
from spade.rl.advantages import agent_advantages
from spade.rl.samples import TrainingSample
from spade.sandbox import SandboxConfig
from spade.selfplay.rewards import regret
from spade.selfplay.rollout import HISTORY_CHARS, Episode, EpisodeSpec, play_episodes, trim_history


@dataclass(frozen=True)
class PlayableEnv:
    key: str
    source: str
    hint: str | None
    kind: str = ""
    skill: str = ""


@dataclass
class EnvPlays:
    env: PlayableEnv
    seeds: list[int]
    unhinted: list[Episode] = field(default_factory=list)
    hinted: list[Episode] = field(default_factory=list)

    @property
    def win_rate(self) -> float:
        return sum(e.solved for e in self.unhinted) / max(1, len(self.unhinted))

    @property
    def regret(self) -> float | None:
        if not self.hinted:
            return None
        return regret([e.training_return for e in self.hinted],
                      [e.training_return for e in self.unhinted])  # fmt: skip


def play_envs(
    envs: Sequence[PlayableEnv],
    respond: Responder,
    plays: int,
    turn_cap: int,
    settings: GenerationSettings,
    rng: random.Random,
    sandbox: SandboxConfig,
    with_hints: bool = True,
) -> list[EnvPlays]:
    """All plays of all envs in one lockstep batch (the policy batches across them)."""
    results = [EnvPlays(env, [rng.randrange(1 << 30) for _ in range(plays)]) for env in envs]
    specs: list[EpisodeSpec] = []
    for index, result in enumerate(results):
        env = result.env
        make = partial(RemoteEnv, env.source, config=sandbox)
        for play, seed in enumerate(result.seeds):
            specs.append(EpisodeSpec(f"{index}/plain/{play}", make, seed, None, turn_cap))
            if with_hints and env.hint:
                specs.append(EpisodeSpec(f"{index}/hint/{play}", make, seed, env.hint, turn_cap))
    episodes = play_episodes(specs, respond, "agent", settings)
    for episode in episodes:
        position, condition, _ = episode.key.split("/")
        target = results[int(position)]
        (target.hinted if condition == "hint" else target.unhinted).append(episode)
    return results


def agent_samples(plays: Sequence[EnvPlays]) -> list[TrainingSample]:
    """Per-turn samples of the unhinted plays, advantages normalised within each env's plays;
    truncated (or broken) episodes are masked, not taught as failures."""
    samples: list[TrainingSample] = []
    for result in plays:
        episodes = result.unhinted
        counted = [e.terminated and e.error is None for e in episodes]
        advantages = agent_advantages([e.training_return for e in episodes], counted)
        for episode, advantage, keep in zip(episodes, advantages, counted, strict=True):
            samples += episode_samples(episode, float(advantage), masked=not keep)
    return samples


def episode_samples(episode: Episode, advantage: float, masked: bool) -> list[TrainingSample]:
    """One sample per agent turn, prompted exactly as the rollout prompted it."""
    samples = []
    for index, message in enumerate(episode.messages):
        if message["role"] != "assistant":
            continue
        prompt = trim_history(episode.messages[:index], HISTORY_CHARS)
        samples.append(TrainingSample(prompt, str(message["content"]), advantage, "agent",
                                      masked=masked))  # fmt: skip
    return samples
