"""Episodes of a sandboxed env played by the policy: the driver behind the `suite:` benchmark
and self-play's agent rollouts.

Two ways to build each turn's prompt:

- chat (evaluation, any backend): the conversation so far as messages, older exchanges
  dropped past `HISTORY_CHARS`; the backend renders it.
- token-in (training, `chat_tokens` given): turn 0 is the rendered chat; every later prompt is
  the previous prompt, the reply's ids exactly as sampled, then the chat template's delta for
  the observation (`ChatTokens.continuation`). The learner later scores exactly these ids.
  Instead of dropping history, an episode whose next prompt and reply would not fit
  `max_context` tokens ends there, truncated (a limit outside the task, masked in training).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from spade.envs.episode import EnvEpisode, EnvHandle, is_solved
from spade.models.chat_template import ChatTokens
from spade.models.policy import Completion, FinishReason, Message, SamplingParams
from spade.rollout.agent_prompt import action_from_reply, system_prompt
from spade.rollout.requests import GenRequest
from spade.sandbox import SandboxUnavailable

HISTORY_CHARS = 24_000
"""Chat prompts' conversation budget: older exchanges are dropped (system + first
observation stay)."""


@dataclass(frozen=True)
class EpisodeSpec:
    key: str
    """Identifies the episode in requests and records (e.g. `ENV_ID/SEED`)."""
    make_env: Callable[[], EnvHandle]
    seed: int
    hint: str | None = None
    turn_cap: int | None = None
    """At most this many agent turns (default: the env's max_turns, else the default cap)."""
    difficulty: int | None = None
    """The env's level for this episode (None: its default, the top level)."""


@dataclass(frozen=True)
class TokenTurn:
    """One agent turn as the sampler produced it: what a training sample is made of."""

    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    logprobs: tuple[float, ...] | None
    finish_reason: FinishReason


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
    """Ended from outside the task: by the env's truncation, our turn cap or the context."""
    error: str | None = None
    tools: list[dict[str, Any]] | None = None
    turns: list[TokenTurn] = field(default_factory=list)
    """Token-in episodes only: every agent turn's exact ids."""

    @property
    def final_reward(self) -> float:
        """The contract's return: the last step's reward (progress so far)."""
        return self.rewards[-1] if self.rewards else 0.0

    @property
    def solved(self) -> bool:
        return is_solved(self.terminated, self.final_reward)

    @property
    def training_return(self) -> float:
        """SPADE's return: the final reward if the episode terminated, else 0."""
        return self.final_reward if self.terminated and self.error is None else 0.0

    @property
    def finished(self) -> bool:
        return self.terminated or self.truncated or self.error is not None


class EnvDriver:
    """One sandboxed env episode, prompted as chat or token-in (see the module docstring)."""

    def __init__(
        self,
        spec: EpisodeSpec,
        phase: str,
        sampling: SamplingParams,
        chat_tokens: ChatTokens | None = None,
        max_context: int | None = None,
    ) -> None:
        self.spec = spec
        self.key = spec.key
        self.phase = phase
        self.sampling = sampling
        self.chat_tokens = chat_tokens
        self.max_context = max_context
        self.episode = Episode(spec.key, spec.seed, spec.hint)
        self._env: EnvHandle | None = None
        self._play: EnvEpisode | None = None
        self._next_ids: tuple[int, ...] | None = None

    # -- the Driver protocol ----------------------------------------------------------------
    def start(self) -> None:
        try:
            self._env = self.spec.make_env()
            self._play = EnvEpisode(self._env, self.spec.turn_cap, self.spec.difficulty)
            observation = self._play.reset(self.spec.seed)
            tools = self._env.spec.tools
        except SandboxUnavailable:  # no sandbox at all: the run cannot go on, not an env fault
            raise
        except Exception as exc:  # a broken env (or its worker) ends its episode, not the run
            self._fail(exc)
            return
        self.episode.tools = tools
        self.episode.messages = [
            {"role": "system", "content": system_prompt(tools, self.spec.hint)},
            {"role": "user", "content": observation},
        ]

    def next_request(self) -> GenRequest | None:
        if self.episode.finished:
            return None
        turn = len(self.episode.actions)
        sample_id = f"{self.key}#{turn}"
        sampling = self.sampling
        if sampling.temperature > 0 and sampling.seed is not None:
            # Plays of one env share prompts: each play samples with its own seed, or they
            # would all draw the same replies. (Greedy requests keep one seed: cache hits.)
            sampling = replace(sampling, seed=sampling.seed + zlib.crc32(sample_id.encode()))
        # The tools are described in the system prompt (`system_prompt`), not passed as
        # schemas: the agent's action format is the env contract's JSON call.
        if self.chat_tokens is None:
            messages = trim_history(self.episode.messages, HISTORY_CHARS)
            return GenRequest(self.phase, sample_id, tuple(messages), sampling)
        return GenRequest(
            self.phase, sample_id, tuple(self.episode.messages), sampling, prompt_ids=self._next_ids
        )

    def feed(self, completion: Completion) -> None:
        if self.chat_tokens is not None:
            self._record_tokens(completion)
        self._act(completion.text)
        if self.chat_tokens is not None and not self.episode.finished:
            self._extend_tokens()

    def replay(self, saved: Any) -> None:
        """Play saved actions (deterministic given the env's seed)."""
        for action in saved if isinstance(saved, list) else []:
            if self.episode.finished:
                break
            self._act(str(action))
        if not self.episode.finished:
            self.episode.truncated = True  # the saved play stopped before the episode ended

    def close(self) -> None:
        if self._env is not None:
            self._env.close()

    # -- stepping ---------------------------------------------------------------------------
    def _act(self, reply: str) -> None:
        episode, play = self.episode, self._play
        assert play is not None
        action = action_from_reply(reply, episode.tools)
        episode.replies.append(reply)
        episode.actions.append(action)
        episode.messages.append({"role": "assistant", "content": reply})
        try:
            step = play.step(action)
        except SandboxUnavailable:
            raise
        except Exception as exc:
            self._fail(exc)
            return
        episode.rewards.append(step.reward)
        episode.terminated = step.terminated
        episode.truncated = play.truncated or play.capped
        episode.messages.append({"role": "user", "content": step.observation})

    def _fail(self, exc: BaseException) -> None:
        self.episode.error = f"{type(exc).__name__}: {exc}"[:500]

    # -- token-in ---------------------------------------------------------------------------
    def _record_tokens(self, completion: Completion) -> None:
        prompt = self._next_ids if self._next_ids is not None else completion.prompt_token_ids
        if prompt is None or completion.token_ids is None:
            raise RuntimeError(
                "token-in rollouts need a backend that returns prompt and completion token "
                "ids (transformers, vLLM); this one returned text only"
            )
        logprobs = tuple(completion.logprobs) if completion.logprobs is not None else None
        self.episode.turns.append(
            TokenTurn(
                tuple(prompt), tuple(completion.token_ids), logprobs, completion.finish_reason
            )
        )

    def _extend_tokens(self) -> None:
        assert self.chat_tokens is not None
        last = self.episode.turns[-1]
        observation = self.episode.messages[-1]
        delta = self.chat_tokens.continuation(list(last.completion_ids), [observation])
        ids = (*last.prompt_ids, *last.completion_ids, *delta)
        room = self.max_context
        if room is not None and len(ids) + self.sampling.max_new_tokens > room:
            self.episode.truncated = True  # the next turn would not fit: ends from outside
            return
        self._next_ids = ids


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
