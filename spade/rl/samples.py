"""Training samples: one policy completion each, tokenised the way the policy generated it.

A sample's prompt is rendered with `render_prompt` and tokenised without added special
tokens, exactly as `TransformersPolicy.generate` does, so the update scores the tokens in
the context the policy saw. The completion is the token ids the policy sampled when the
rollout kept them (`Completion.token_ids`), else the text plus the template's end-of-turn
token. Only completion tokens carry loss (`completion_mask`): the prompt, observations and
earlier turns are context, never targets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import torch

from spade.models.chat_template import render_prompt
from spade.models.policy import Conversation, ToolSchema

Role = Literal["designer", "agent"]
ROLES: tuple[Role, ...] = get_args(Role)

_SENTINEL = "SPADE-END-OF-TURN-PROBE"


@dataclass(frozen=True)
class TrainingSample:
    """One assistant turn to learn from, with its (precomputed, per-role) advantage."""

    messages: Conversation
    """The conversation before the assistant turn: what the policy was prompted with."""
    completion: str
    """The assistant's reply text (without the end-of-turn token)."""
    advantage: float
    role: Role
    tools: list[ToolSchema] | None = None
    """Tool schemas the prompt was rendered with (tool-use envs)."""
    masked: bool = False
    """True: no loss at all (e.g. a truncated episode must not be taught as a failure)."""
    completion_token_ids: tuple[int, ...] | None = None
    """The token ids the policy sampled (end-of-turn included when it ended); preferred to
    re-tokenising `completion`, which need not give the same ids back."""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")
        if not math.isfinite(self.advantage):
            raise ValueError(f"advantage must be finite, got {self.advantage!r}")
        if not self.messages:
            raise ValueError("a training sample needs a non-empty prompt conversation")


def samples_from_episode(
    conversation: Conversation,
    advantage: float,
    role: Role = "agent",
    tools: list[ToolSchema] | None = None,
    masked: bool = False,
    token_ids: Sequence[Sequence[int] | None] | None = None,
) -> list[TrainingSample]:
    """One sample per assistant turn of a played episode, all with the episode's advantage.

    Each turn's prompt is the conversation before it (earlier actions and observations).
    `token_ids`, when given, holds each assistant turn's sampled ids (`Completion.token_ids`).
    """
    turns = [i for i, m in enumerate(conversation) if m.get("role") == "assistant"]
    if token_ids is not None and len(token_ids) != len(turns):
        raise ValueError(f"token_ids has {len(token_ids)} entries for {len(turns)} assistant turns")
    samples = []
    for k, i in enumerate(turns):
        content = conversation[i].get("content")
        if not isinstance(content, str):
            raise ValueError(f"assistant turn {i} has no text content: {conversation[i]!r}")
        ids = token_ids[k] if token_ids is not None else None
        samples.append(
            TrainingSample(
                messages=list(conversation[:i]),
                completion=content,
                advantage=advantage,
                role=role,
                tools=tools,
                masked=masked,
                completion_token_ids=tuple(ids) if ids is not None else None,
            )
        )
    return samples


@dataclass(frozen=True)
class TokenizedSample:
    prompt_ids: list[int]
    completion_ids: list[int]
    advantage: float
    role: Role
    masked: bool
    truncated: bool
    """The prompt (or, if it alone was too long, the completion) was cut to `max_length`."""


def end_of_turn_id(tokenizer: Any) -> int:
    """The token the chat template closes an assistant turn with (e.g. `<|im_end|>`).

    Found by rendering a probe reply: the first special token after it. Falls back to the
    tokenizer's eos token.
    """
    probe = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": _SENTINEL}]
    text = tokenizer.apply_chat_template(probe, tokenize=False)
    if isinstance(text, str) and _SENTINEL in text:
        suffix = text.split(_SENTINEL, 1)[1]
        special = set(tokenizer.all_special_ids)
        for token in tokenizer(suffix, add_special_tokens=False)["input_ids"]:
            if token in special:
                return int(token)
    if tokenizer.eos_token_id is None:
        raise ValueError("cannot tell the end-of-turn token: no special token closes a turn")
    return int(tokenizer.eos_token_id)


def tokenize_sample(
    sample: TrainingSample, tokenizer: Any, max_length: int, end_of_turn: int
) -> TokenizedSample:
    """Prompt and completion ids, the prompt cut from the left to fit `max_length`."""
    if max_length < 2:
        raise ValueError(f"max_length must be >= 2 (a context and a target), got {max_length}")
    prompt_text = render_prompt(tokenizer, sample.messages, sample.tools)
    prompt = list(tokenizer(prompt_text, add_special_tokens=False)["input_ids"])
    if sample.completion_token_ids is not None:
        completion = list(sample.completion_token_ids)
    else:
        completion = [*tokenizer(sample.completion, add_special_tokens=False)["input_ids"]]
        completion.append(end_of_turn)
    if not completion:
        raise ValueError("a training sample's completion_token_ids is empty")
    truncated = len(prompt) + len(completion) > max_length
    if truncated:
        # The completion is what is learned, so it is kept whole when it fits with one
        # token of context (a model needs some token to predict its first one from).
        completion = completion[: max_length - 1]
        prompt = prompt[len(prompt) - (max_length - len(completion)) :]
    return TokenizedSample(
        prompt, completion, sample.advantage, sample.role, sample.masked, truncated
    )


@dataclass
class Batch:
    """Padded tensors of a micro-batch: prompts padded on the left, completions on the right.

    That layout puts every completion in the last `completion_width` positions, so only
    those logits are computed (`logits_to_keep`), as in TRL's GRPO.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    completion_mask: torch.Tensor
    """1 exactly on completion tokens (full width, aligned with `input_ids`)."""
    position_ids: torch.Tensor
    """Counted from each row's first real token, as `generate` does with left padding."""
    advantages: torch.Tensor
    roles: list[Role]
    completion_width: int
    """Positions from the end of each row that may hold completion tokens."""

    def to(self, device: torch.device) -> Batch:
        return Batch(
            self.input_ids.to(device),
            self.attention_mask.to(device),
            self.completion_mask.to(device),
            self.position_ids.to(device),
            self.advantages.to(device),
            self.roles,
            self.completion_width,
        )


def collate(samples: Sequence[TokenizedSample], pad_id: int) -> Batch:
    prompt_width = max(len(s.prompt_ids) for s in samples)
    completion_width = max(len(s.completion_ids) for s in samples)
    ids, attention, completion = [], [], []
    for s in samples:
        n_prompt, n_completion = len(s.prompt_ids), len(s.completion_ids)
        left, right = prompt_width - n_prompt, completion_width - n_completion
        ids.append([pad_id] * left + s.prompt_ids + s.completion_ids + [pad_id] * right)
        attention.append([0] * left + [1] * (n_prompt + n_completion) + [0] * right)
        completion.append([0] * (left + n_prompt) + [1] * n_completion + [0] * right)
    attention_mask = torch.tensor(attention)
    position_ids = (attention_mask.cumsum(dim=1) - 1).clamp(min=0)
    return Batch(
        input_ids=torch.tensor(ids),
        attention_mask=attention_mask,
        completion_mask=torch.tensor(completion),
        position_ids=position_ids,
        advantages=torch.tensor([s.advantage for s in samples], dtype=torch.float32),
        roles=[s.role for s in samples],
        completion_width=completion_width,
    )
