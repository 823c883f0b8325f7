"""Training samples: one sampled completion each, as the exact token ids the policy produced.

A sample is the prompt ids the sampler conditioned on and the ids after them: the tokens it
sampled (the end-of-turn token only when it was sampled), with the per-token logprobs the
sampler reported. Nothing is re-rendered or re-tokenised here. A whole agent episode is one
sample, as in TRL's and verl's multi-turn training: its turns extend each other token-in
(`spade.rollout.EnvDriver`), so the sequence is turn 0's prompt, then each reply followed by
the observation delta that led to the next one; `completion_mask` marks the sampled tokens
(1) among that context (0). One sequence per episode costs one forward pass over it, where a
sample per turn would re-run every earlier turn. Only sampled tokens carry loss: the prompt,
observations and the template's glue are context, never targets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import torch

Role = Literal["designer", "agent"]
ROLES: tuple[Role, ...] = get_args(Role)


@dataclass(frozen=True)
class TrainingSample:
    """One sampled completion to learn from, with its (precomputed, per-role) advantage."""

    prompt_ids: tuple[int, ...]
    """The ids the sampler conditioned on."""
    completion_ids: tuple[int, ...]
    """The ids it sampled, exactly."""
    advantage: float
    role: Role
    masked: bool = False
    """True: no loss at all (e.g. a truncated episode must not be taught as a failure)."""
    sampled_logprobs: tuple[float, ...] | None = None
    """The sampler's log p of each completion token (for the mismatch metric and TIS); any
    value where `completion_mask` is 0."""
    completion_mask: tuple[int, ...] | None = None
    """1 where a completion token was sampled (trained), 0 for context between sampled spans
    (an episode's observations); None: every completion token was sampled."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "prompt_ids", tuple(self.prompt_ids))
        object.__setattr__(self, "completion_ids", tuple(self.completion_ids))
        if self.sampled_logprobs is not None:
            object.__setattr__(self, "sampled_logprobs", tuple(self.sampled_logprobs))
        if self.completion_mask is not None:
            object.__setattr__(self, "completion_mask", tuple(int(m) for m in self.completion_mask))
            if len(self.completion_mask) != len(self.completion_ids):
                raise ValueError(
                    f"completion_mask has {len(self.completion_mask)} entries for "
                    f"{len(self.completion_ids)} completion tokens"
                )
            if not any(self.completion_mask) or self.completion_mask[0] != 1:
                raise ValueError("completion_mask must start with a sampled token (1)")
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")
        if not math.isfinite(self.advantage):
            raise ValueError(f"advantage must be finite, got {self.advantage!r}")
        if not self.prompt_ids:
            raise ValueError("a training sample needs a non-empty prompt")
        if not self.completion_ids:
            raise ValueError("a training sample needs at least one completion token")
        if self.sampled_logprobs is not None and len(self.sampled_logprobs) != len(
            self.completion_ids
        ):
            raise ValueError(
                f"sampled_logprobs has {len(self.sampled_logprobs)} entries for "
                f"{len(self.completion_ids)} completion tokens"
            )


@dataclass(frozen=True)
class TokenizedSample:
    prompt_ids: list[int]
    completion_ids: list[int]
    advantage: float
    role: Role
    masked: bool
    truncated: bool
    """The prompt (or, if it alone was too long, the completion) was cut to `max_length`."""
    sampled_logprobs: list[float] | None = None
    completion_mask: list[int] | None = None
    """As `TrainingSample.completion_mask`, cut alike; None: all completion tokens trained."""

    @property
    def trained_tokens(self) -> int:
        """Completion tokens that carry loss."""
        mask = self.completion_mask
        return len(self.completion_ids) if mask is None else sum(mask)


def fit_sample(sample: TrainingSample, max_length: int) -> TokenizedSample:
    """The sample's ids, the prompt cut from the left to fit `max_length` (an episode too long
    even so loses its last turns)."""
    if max_length < 2:
        raise ValueError(f"max_length must be >= 2 (a context and a target), got {max_length}")
    prompt, completion = list(sample.prompt_ids), list(sample.completion_ids)
    logprobs = list(sample.sampled_logprobs) if sample.sampled_logprobs is not None else None
    mask = list(sample.completion_mask) if sample.completion_mask is not None else None
    truncated = len(prompt) + len(completion) > max_length
    if truncated:
        # The completion is what is learned, so it is kept whole when it fits with one
        # token of context (a model needs some token to predict its first one from).
        completion = completion[: max_length - 1]
        if logprobs is not None:
            logprobs = logprobs[: len(completion)]
        if mask is not None:
            mask = mask[: len(completion)]
        prompt = prompt[len(prompt) - (max_length - len(completion)) :]
    return TokenizedSample(
        prompt, completion, sample.advantage, sample.role, sample.masked, truncated, logprobs, mask
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
    sampled_logprobs: torch.Tensor | None = None
    """(B, completion_width): the sampler's logprobs, right-padded with 0; None unless every
    row has them."""

    def to(self, device: torch.device) -> Batch:
        sampled = self.sampled_logprobs
        return Batch(
            self.input_ids.to(device),
            self.attention_mask.to(device),
            self.completion_mask.to(device),
            self.position_ids.to(device),
            self.advantages.to(device),
            self.roles,
            self.completion_width,
            sampled.to(device) if sampled is not None else None,
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
        trained = s.completion_mask if s.completion_mask is not None else [1] * n_completion
        completion.append([0] * (left + n_prompt) + list(trained) + [0] * right)
    attention_mask = torch.tensor(attention)
    position_ids = (attention_mask.cumsum(dim=1) - 1).clamp(min=0)
    sampled = None
    if all(s.sampled_logprobs is not None for s in samples):
        sampled = torch.tensor(
            [
                [*(s.sampled_logprobs or []), *[0.0] * (completion_width - len(s.completion_ids))]
                for s in samples
            ],
            dtype=torch.float32,
        )
    return Batch(
        input_ids=torch.tensor(ids),
        attention_mask=attention_mask,
        completion_mask=torch.tensor(completion),
        position_ids=position_ids,
        advantages=torch.tensor([s.advantage for s in samples], dtype=torch.float32),
        roles=[s.role for s in samples],
        completion_width=completion_width,
        sampled_logprobs=sampled,
    )
