"""What an update reports, per role: loss, ratio, clipping, entropy, KL, gradient norm, tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field


@dataclass
class RoleTally:
    samples: int = 0
    masked: int = 0
    truncated: int = 0
    tokens: int = 0
    advantage_sum: float = 0.0
    scored_tokens: float = 0.0
    loss_sum: float = 0.0
    ratio_sum: float = 0.0
    clipped: float = 0.0
    entropy_sum: float = 0.0
    kl_sum: float = 0.0
    grad_norms: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class RoleMetrics:
    samples: int
    """Samples that took part (not masked)."""
    masked: int
    truncated: int
    tokens: int
    """Completion tokens of the samples that took part."""
    advantage_mean: float
    loss: float
    """Mean per-token surrogate loss over the role's scored tokens, all passes."""
    ratio_mean: float
    clip_fraction: float
    entropy: float
    kl: float
    grad_norm: float
    """The role's own gradient norm (before clipping), mean over optimizer steps."""


@dataclass(frozen=True)
class UpdateMetrics:
    loss: float
    """The optimised objective, mean over optimizer steps."""
    grad_norm: float
    """Global gradient norm before clipping, mean over optimizer steps taken."""
    optimizer_steps: int
    skipped_steps: int
    """Steps with no learning signal (all advantages 0, no KL) or a non-finite gradient."""
    lr: float
    seconds: float
    roles: dict[str, RoleMetrics]

    def as_dict(self) -> dict[str, float]:
        """Flat metrics for logs: `loss`, `designer/clip_fraction`, ..."""
        flat = {k: float(v) for k, v in asdict(self).items() if k != "roles"}
        for role, metrics in self.roles.items():
            flat.update({f"{role}/{k}": float(v) for k, v in asdict(metrics).items()})
        return flat


def role_metrics(t: RoleTally) -> RoleMetrics:
    scored = max(t.scored_tokens, 1.0)
    return RoleMetrics(
        samples=t.samples,
        masked=t.masked,
        truncated=t.truncated,
        tokens=t.tokens,
        advantage_mean=t.advantage_sum / max(t.samples, 1),
        loss=t.loss_sum / scored,
        ratio_mean=t.ratio_sum / scored if t.scored_tokens else 1.0,
        clip_fraction=t.clipped / scored,
        entropy=t.entropy_sum / scored,
        kl=t.kl_sum / scored,
        grad_norm=mean(t.grad_norms),
    )


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
