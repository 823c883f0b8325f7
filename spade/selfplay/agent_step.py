"""One agent step: play each env K times without the hint and K times with it, on the same
seeds, and turn the plays into win rates, regret and agent training samples."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from spade.envs.episode import EnvHandle
from spade.envs.remote import RemoteEnv
from spade.models.chat_template import ChatTokens
from spade.models.policy import SamplingParams
from spade.rl.advantages import agent_advantages
from spade.rl.samples import TrainingSample
from spade.rollout import EnvDriver, Episode, EpisodeSpec, Responder, play
from spade.sandbox import SandboxConfig
from spade.selfplay.rewards import regret
from spade.suites import training_seeds

WINDOW = 32
"""Episodes (each a sandboxed env worker) live at once."""


@dataclass(frozen=True)
class PlayableEnv:
    key: str
    source: str
    hint: str | None
    kind: str = ""
    skill: str = ""
    eval_seeds: frozenset[int] = frozenset()
    """A frozen suite env's evaluation seeds: never drawn for its training plays."""
    max_turns: int | None = None
    """The turn budget the env states (a frozen suite's manifest), where known."""
    levels: int = 1
    """Difficulty levels the env takes at reset (1: no knob)."""
    difficulty: int | None = None
    """The level this iteration's plays use (None: the env's default, its top level)."""
    opener: Callable[[], EnvHandle] | None = field(default=None, compare=False)
    """Opens one of spade's own in-process envs (a procedural task); None: `source` runs in
    the sandbox."""


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
    def has_signal(self) -> bool:
        """Whether the unhinted plays teach the agent anything: advantages are centred within
        an env's counted (terminated) plays, so equal returns give every sample 0."""
        counted = [e.training_return for e in self.unhinted if e.terminated and e.error is None]
        return len(set(counted)) > 1

    @property
    def regret(self) -> float | None:
        if not self.hinted:
            return None
        return regret(
            [e.training_return for e in self.hinted], [e.training_return for e in self.unhinted]
        )


@dataclass(frozen=True)
class Rollout:
    """How the agent's episodes are prompted and sampled (token-in: see `EnvDriver`)."""

    sampling: SamplingParams
    chat_tokens: ChatTokens
    max_context: int
    """Most tokens of a turn's prompt plus its reply: the learner's `max_length`."""
    turn_cap: int | None = None


def play_envs(
    envs: Sequence[PlayableEnv],
    respond: Responder,
    plays: int,
    rollout: Rollout,
    rng: random.Random,
    sandbox: SandboxConfig,
    with_hints: bool = True,
    open_env: Callable[..., RemoteEnv] = RemoteEnv,
) -> list[EnvPlays]:
    """All plays of all envs in one lockstep batch (the policy batches across them).

    `open_env(source, config=sandbox)` starts each episode's env worker: `RemoteEnv` here, or
    `spade.distributed.EnvHosts.open` for a worker on a Ray actor's node."""
    results = [EnvPlays(env, training_seeds(rng, plays, env.eval_seeds)) for env in envs]
    specs: list[EpisodeSpec] = []
    for index, result in enumerate(results):
        env = result.env
        make = env.opener or partial(open_env, env.source, config=sandbox)
        for n, seed in enumerate(result.seeds):
            cap, level = rollout.turn_cap, env.difficulty
            specs.append(EpisodeSpec(f"{index}/plain/{n}", make, seed, None, cap, level))
            if with_hints and env.hint:
                specs.append(EpisodeSpec(f"{index}/hint/{n}", make, seed, env.hint, cap, level))
    drivers = [
        EnvDriver(spec, "agent", rollout.sampling, rollout.chat_tokens, rollout.max_context)
        for spec in specs
    ]
    play(drivers, respond, phase="agent", window=WINDOW)
    for episode in (d.episode for d in drivers):
        position, condition, _ = episode.key.split("/")
        target = results[int(position)]
        (target.hinted if condition == "hint" else target.unhinted).append(episode)
    return results


def refill(
    plays: Sequence[EnvPlays],
    draw: Callable[[int, set[str]], list[PlayableEnv]],
    play_round: Callable[[list[PlayableEnv]], list[EnvPlays]],
    rounds: int,
) -> list[EnvPlays]:
    """Dynamic sampling (DAPO, arXiv 2503.14476): for each env whose plays carry no signal
    (all solved, or all failed alike), play a fresh env instead, for up to `rounds` rounds, so
    that an iteration of a weak agent still gets a gradient. `draw(n, played)` picks up to n
    envs not in `played` (keys); `play_round` plays them. Returns the added plays only: the
    first round's stay as they were, for the designer's rewards, memory and metrics."""
    added: list[EnvPlays] = []
    played = {p.env.key for p in plays}
    idle = sum(not p.has_signal for p in plays)
    for _ in range(rounds):
        fresh = draw(idle, played) if idle else []
        if not fresh:
            break
        done = play_round(fresh)
        added += done
        played |= {env.key for env in fresh}
        idle = sum(not p.has_signal for p in done)
    return added


def refill_metrics(plays: Sequence[EnvPlays], refilled: Sequence[EnvPlays]) -> dict[str, int]:
    """What dynamic sampling did: the envs whose plays carry a signal before and after it."""
    return {
        "agent/envs_with_signal": sum(p.has_signal for p in plays),
        "agent/refill_envs": len(refilled),
        "agent/refill_envs_with_signal": sum(p.has_signal for p in refilled),
    }


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
    """The whole episode as one sample, exactly the ids the sampler saw and produced
    (token-in): turn 0's prompt, then each reply (trained) and the observation delta that
    follows it (context); none for an episode without a sampled token."""
    if not episode.turns:
        return []
    ids = list(episode.turns[0].prompt_ids)
    mask = [0] * len(ids)
    logprobs = [0.0] * len(ids)
    for turn in episode.turns:
        if list(turn.prompt_ids[: len(ids)]) != ids:
            raise ValueError(f"{episode.key}: a turn's prompt does not extend the earlier ids")
        delta = turn.prompt_ids[len(ids) :]
        ids += delta
        mask += [0] * len(delta)
        logprobs += [0.0] * len(delta)
        ids += turn.completion_ids
        mask += [1] * len(turn.completion_ids)
        logprobs += turn.logprobs or [0.0] * len(turn.completion_ids)
    if 1 not in mask:
        return []
    start = mask.index(1)  # the prompt: everything before the first sampled token
    sampled = (
        tuple(logprobs[start:]) if all(t.logprobs is not None for t in episode.turns) else None
    )
    return [
        TrainingSample(
            tuple(ids[:start]),
            tuple(ids[start:]),
            advantage,
            "agent",
            masked=masked,
            completion_mask=tuple(mask[start:]),
            sampled_logprobs=sampled,
        )
    ]
