"""Play sandboxed environments with a responder: many episodes in lockstep.

Each round asks the responder once for the next reply of every active episode, so the policy
batches across episodes and the completion cache sees whole conversations. Used by the
`suite:` benchmark (no hints) and by self-play (plays with and without the hint).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from spade.envs.remote import RemoteEnv
from spade.evals.samples import GenerationSettings, GenRequest, Message, Responder
from spade.sandbox import SandboxError
from spade.selfplay.agent_prompt import action_from_reply, system_prompt

DEFAULT_TURN_CAP = 30
HISTORY_CHARS = 24_000
"""Conversation budget: older exchanges are dropped (system + first observation stay)."""


@dataclass(frozen=True)
class EpisodeSpec:
    key: str
    """Identifies the episode in requests and records (e.g. `ENV_ID/SEED`)."""
    make_env: Callable[[], RemoteEnv]
    seed: int
    hint: str | None = None
    turn_cap: int | None = None
    """At most this many agent turns (default: the env's max_turns, else 30)."""


@dataclass
class Episode:
    key: str
    seed: int
    hint: str | None
    messages: list[Message] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False
    error: str | None = None
    tools: list[dict[str, Any]] | None = None

    @property
    def final_reward(self) -> float:
        """The contract's return: the last step's reward (progress so far)."""
        return self.rewards[-1] if self.rewards else 0.0

    @property
    def solved(self) -> bool:
        return self.terminated and self.final_reward >= 1.0

    @property
    def training_return(self) -> float:
        """SPADE's return: the final reward if the episode terminated, else 0."""
        return self.final_reward if self.terminated and self.error is None else 0.0

    @property
    def finished(self) -> bool:
        return self.terminated or self.truncated or self.error is not None


class _Live:
    """An episode being played: its env, its transcript, its turn budget."""

    def __init__(self, spec: EpisodeSpec) -> None:
        self.spec = spec
        self.episode = Episode(spec.key, spec.seed, spec.hint)
        self.env = spec.make_env()
        self.cap = spec.turn_cap or DEFAULT_TURN_CAP

    def start(self) -> None:
        try:
            observation, _ = self.env.reset(self.spec.seed)
            tools = self.env.spec.tools
        except (SandboxError, Exception) as exc:  # a broken env ends its episode, not the run
            self._fail(exc)
            return
        self.episode.tools = tools
        self.cap = self.spec.turn_cap or self.env.spec.max_turns or DEFAULT_TURN_CAP
        self.episode.messages = [
            {"role": "system", "content": system_prompt(tools, self.spec.hint)},
            {"role": "user", "content": observation},
        ]

    def act(self, reply: str) -> None:
        episode = self.episode
        action = action_from_reply(reply, episode.tools)
        episode.replies.append(reply)
        episode.actions.append(action)
        episode.messages.append({"role": "assistant", "content": reply})
        try:
            step = self.env.step(action)
        except (SandboxError, Exception) as exc:
            self._fail(exc)
            return
        episode.rewards.append(step.reward)
        episode.terminated = step.terminated
        episode.truncated = step.truncated or (
            not step.terminated and len(episode.actions) >= self.cap
        )
        episode.messages.append({"role": "user", "content": step.observation})

    def _fail(self, exc: BaseException) -> None:
        self.episode.error = f"{type(exc).__name__}: {exc}"[:500]

    def request(self, benchmark: str, settings: GenerationSettings) -> GenRequest:
        messages = trim_history(self.episode.messages, HISTORY_CHARS)
        turn = len(self.episode.actions)
        sample_id = f"{self.spec.key}#{turn}"
        if settings.temperature > 0:
            # Plays of one env share prompts: each play samples with its own seed, or they
            # would all draw the same replies. (Greedy requests keep one seed: cache hits.)
            settings = replace(settings, seed=settings.seed + zlib.crc32(sample_id.encode()))
        return GenRequest(benchmark, sample_id, tuple(messages), settings)

    def close(self) -> None:
        self.env.close()


def trim_history(messages: list[Message], budget: int) -> list[Message]:
    """System prompt and first observation, then as many recent messages as fit `budget`."""
    head, tail = messages[:2], messages[2:]
    used = sum(len(str(m["content"])) for m in head)
    kept: list[Message] = []
    for message in reversed(tail):
        used += len(str(message["content"]))
        if used > budget and kept:
            break
        kept.append(message)
    kept.reverse()
    if kept and kept[0]["role"] != "assistant":
        kept = kept[1:]  # keep user/assistant alternation after the head
    return head + kept


def play_episodes(
    specs: Sequence[EpisodeSpec],
    respond: Responder,
    benchmark: str,
    settings: GenerationSettings,
    on_done: Callable[[Episode], None] | None = None,
    parallel: int = 32,
) -> list[Episode]:
    """Play every spec to the end, at most `parallel` sandboxed envs alive at once."""
    episodes: dict[str, Episode] = {}
    for start in range(0, len(specs), parallel):
        live = [_Live(spec) for spec in specs[start : start + parallel]]
        try:
            for item in live:
                item.start()
            _lockstep(live, respond, benchmark, settings, on_done)
        finally:
            for item in live:
                item.close()
        episodes.update((item.spec.key, item.episode) for item in live)
    return [episodes[spec.key] for spec in specs]


def _lockstep(
    live: list[_Live],
    respond: Responder,
    benchmark: str,
    settings: GenerationSettings,
    on_done: Callable[[Episode], None] | None,
) -> None:
    reported: set[str] = set()
    while True:
        for item in live:
            if item.episode.finished and item.spec.key not in reported:
                reported.add(item.spec.key)
                if on_done:
                    on_done(item.episode)
        active = [item for item in live if not item.episode.finished]
        if not active:
            return
        replies = respond([item.request(benchmark, settings) for item in active])
        for item, texts in zip(active, replies, strict=True):
            item.act(texts[0])


def replay_episode(spec: EpisodeSpec, actions: Sequence[str]) -> Episode:
    """Play saved actions (predictions mode): deterministic given the env's seed."""
    item = _Live(spec)
    try:
        item.start()
        for action in actions:
            if item.episode.finished:
                break
            item.act(str(action))
        if not item.episode.finished:
            item.episode.truncated = True  # the saved play stopped before the episode ended
    finally:
        item.close()
    return item.episode
