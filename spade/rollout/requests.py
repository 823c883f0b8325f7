"""What the policy is asked, and the seam that answers: `GenRequest` and `Responder`.

Nothing above this layer talks to a model directly. Evaluation and training both hand
`GenRequest`s to a `Responder`, which generates (a policy behind the completion cache) or
replays saved predictions, and gets back full `Completion`s: text, the sampled token ids,
their logprobs when asked. Training builds its samples from those ids, never from the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from spade.models.policy import Completion, Message, SamplingParams, ToolSchema

POLICY = "policy"
"""The party that answers requests by default: the model under test or in training."""


@dataclass(frozen=True)
class GenRequest:
    """One prompt of one sample or episode turn."""

    phase: str
    """Who asks: a benchmark's name in evaluation; `designer`, `hint` or `agent` in training."""
    sample_id: str
    messages: tuple[Message, ...]
    """The OpenAI-style chat; with `prompt_ids` only a description of them (for records)."""
    sampling: SamplingParams
    tools: tuple[ToolSchema, ...] | None = None
    n: int = 1
    """Completions drawn for this prompt (pass@k needs n >= k); draw d uses seed + d."""
    prompt_ids: tuple[int, ...] | None = None
    """Token-in: generate from exactly these ids (a later turn of a training episode)."""
    to: str = POLICY
    """Who answers: the policy, or another model the episode talks to (ACEBench's user)."""

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"GenRequest.n must be >= 1, got {self.n}")


class Responder(Protocol):
    """Answers generation requests: one list of `n` completions per request, in order."""

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[Completion]]: ...
