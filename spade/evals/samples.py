"""What flows through an evaluation: generation requests, responders, per-sample results.

A benchmark never talks to a model directly. It hands `GenRequest`s to a `Responder`, which
either generates (through a policy and the completion cache) or replays saved predictions.
That one seam is what lets `--predictions` score saved outputs with the same code path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

Message = dict[str, Any]


@dataclass(frozen=True)
class GenerationSettings:
    """Decoding settings; part of every cache key and of every results record."""

    max_gen_toks: int = 1024
    """Set explicitly: lm-eval's default of 256 silently truncates reasoning."""
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    n: int = 1
    """Completions per prompt (pass@k needs n ≥ k)."""
    seed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GenRequest:
    """One prompt of one sample. `messages` is an OpenAI-style chat."""

    benchmark: str
    sample_id: str
    messages: tuple[Message, ...]
    settings: GenerationSettings
    tools: tuple[dict[str, Any], ...] | None = None


class Responder(Protocol):
    """Answers generation requests: one list of `settings.n` texts per request."""

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[str]]: ...


@dataclass
class SampleResult:
    """One scored sample: what the per-sample JSONL holds."""

    benchmark: str
    sample_id: str
    prompt: Any
    """The chat (or rendered prompt) the model saw."""
    output: Any
    """The generated text (a list of texts when n > 1; nested lists for multi-turn tool use)."""
    answer: Any
    """What the scorer extracted from the output (None when nothing could be parsed)."""
    target: Any
    score: float
    """The primary metric's value for this sample."""
    metrics: dict[str, float] = field(default_factory=dict)
    parsed: bool = True
    """False when the answer could not be extracted (counted as parse failures)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


ProgressCallback = Callable[[int], None]
