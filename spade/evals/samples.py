"""What an evaluation produces: per-sample results (the per-sample JSONL records).

A benchmark never talks to a model directly: it hands `spade.rollout.GenRequest`s to a
`Responder` (a policy behind the cache, or saved predictions replayed) and multi-turn
episodes to `spade.rollout.play`. That one seam lets `--predictions` score saved outputs
with the same code path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


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
    timed_out: bool = False
    """True when scoring was still cut short by its time limit after its retries, so the
    score may be a timeout's false 0 (counted as scoring timeouts)."""
    scoring_retries: int = 0
    """Scoring attempts repeated because a time limit cut the one before short."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


ProgressCallback = Callable[[int], None]
