"""The one interface every policy backend implements: batched chat generation."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol, runtime_checkable

Message = dict[str, Any]
"""An OpenAI-style chat message: `{"role": ..., "content": ...}` (plus `tool_calls` etc.)."""
Conversation = list[Message]
ToolSchema = dict[str, Any]
"""An OpenAI function schema: `{"type": "function", "function": {name, description,
parameters}}`."""
FinishReason = Literal["stop", "length"]


class PolicyError(RuntimeError):
    """A backend's engine or server cannot start, or died; the message is one line."""


@dataclass(frozen=True)
class TokenPrompt:
    """A prompt given as token ids (token-in): generated from exactly these, no template.

    Multi-turn training builds each turn's prompt by extending the previous turn's ids with
    the sampled reply and the template's rendering of what came next, so the learner scores
    the very tokens the sampler conditioned on.
    """

    ids: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "ids", tuple(int(i) for i in self.ids))
        if not self.ids:
            raise ValueError("a token prompt needs at least one token")


Prompt = Conversation | TokenPrompt
"""What a policy generates from: a chat it renders itself, or ready token ids."""

DEFAULT_MAX_NEW_TOKENS = 512


@dataclass(frozen=True)
class SamplingParams:
    """How to sample one completion per conversation (callers repeat a conversation for n > 1)."""

    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    """Most tokens generated per completion; reaching it ends with finish_reason 'length'."""
    temperature: float = 0.0
    """0 means greedy decoding; above 0, sample from softmax(logits / temperature)."""
    top_p: float = 1.0
    """Nucleus sampling: sample among the smallest token set with this much probability."""
    stop: tuple[str, ...] = ()
    """Strings that end a completion; the text is cut before the first one found."""
    seed: int | None = None
    """Seeds sampling so a call can be repeated; None draws fresh randomness."""
    logprobs: bool = False
    """Also return each sampled token's log-probability."""

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if isinstance(self.stop, str):  # a bare string would be read as one stop per character
            object.__setattr__(self, "stop", (self.stop,))
        object.__setattr__(self, "stop", tuple(s for s in self.stop if s))

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass
class Completion:
    """One generated reply."""

    text: str
    """The reply, without the end-of-turn token and cut before any stop string."""
    finish_reason: FinishReason
    """'stop' (end of turn, stop string, or tool call) or 'length' (max_new_tokens reached)."""
    prompt_tokens: int
    """Tokens in the rendered prompt (0 when a remote server does not report usage)."""
    completion_tokens: int
    """Tokens generated, including the end-of-turn token when one was generated."""
    token_ids: list[int] | None = None
    """Generated token ids, exactly as sampled: the end-of-turn token included when the
    reply ended with it, none appended when it was cut off. None only where a remote server
    does not report them."""
    logprobs: list[float] | None = None
    """Per generated token, log p(token) under softmax(logits / temperature) (temperature 1
    when greedy), before top-p truncation: the quantity a policy-gradient loss recomputes."""
    tool_calls: list[dict[str, Any]] | None = None
    """Structured calls `{"name", "arguments"}` when a server parsed them out of the reply."""
    prompt_token_ids: list[int] | None = None
    """The prompt's token ids exactly as the model was fed them (a `TokenPrompt`'s own ids,
    or the rendered chat's): what a training sample conditions on. None where unknown."""


def overflow_reply(
    name: str, row: list[int], window: int, sampling: SamplingParams, first: bool
) -> Completion:
    """The empty 'length' reply to a prompt of `row` that fills a `window`-token context (a
    served model rejects it; a local one would run past its trained positions, slowly and
    into garbage). The `first` overflow of a backend warns once."""
    if first:
        warnings.warn(
            f"{name}: a {len(row)}-token prompt fills the {window}-token context window; "
            "replying empty (counted in context_overflows)",
            stacklevel=4,
        )
    return Completion(
        text="",
        finish_reason="length",
        prompt_tokens=len(row),
        completion_tokens=0,
        token_ids=[],
        prompt_token_ids=list(row),
        logprobs=[] if sampling.logprobs else None,
    )


@dataclass(frozen=True)
class PolicyInfo:
    """What produced the completions: recorded with every result."""

    backend: str
    model: str
    """Model directory, or the served model's name."""
    weights_sha256: str | None = None
    """Content hash of the weight files (None when they are not local)."""
    dtype: str | None = None
    device: str | None = None
    endpoint: str | None = None
    """Base URL of a served model."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class Policy(Protocol):
    """Batched chat generation, one completion per conversation, in order."""

    def generate(
        self,
        conversations: Sequence[Prompt],
        sampling: SamplingParams,
        tools: Sequence[list[ToolSchema] | None] | None = None,
    ) -> list[Completion]:
        """`tools`, when given, holds each conversation's function schemas (or None); a
        `TokenPrompt` carries its tools already rendered (its entry is ignored)."""
        ...

    def describe(self) -> PolicyInfo: ...


def check_tools_arg(
    conversations: Sequence[Prompt], tools: Sequence[list[ToolSchema] | None] | None
) -> list[list[ToolSchema] | None]:
    """Per-conversation tools, checking that there is one entry per conversation."""
    if tools is None:
        return [None] * len(conversations)
    if len(tools) != len(conversations):
        raise ValueError(
            f"tools must have one entry per conversation: got {len(tools)} for "
            f"{len(conversations)} conversations"
        )
    return list(tools)


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """`text` cut before the earliest stop string, and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)
