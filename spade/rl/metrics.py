"""What an update reports, per role: loss, ratio, clipping, entropy, KL, gradient norm, tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import torch


@dataclass
class RoleTally:
    samples: int = 0
    with_gradient: int = 0
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


@dataclass
class MismatchTally:
    """Learner vs sampler log-probabilities of the same completion tokens, before the update."""

    tokens: int = 0
    abs_diff_sum: float = 0.0
    abs_diff_max: float = 0.0
    ratio_max: float = 0.0
    ratio_min: float = float("inf")
    kl_sum: float = 0.0

    def add(self, learner: torch.Tensor, sampler: torch.Tensor, mask: torch.Tensor) -> None:
        keep = mask.bool()
        if not bool(keep.any()):
            return
        delta = (learner.float() - sampler.float())[keep]
        ratio = torch.exp(delta)
        self.tokens += int(delta.numel())
        self.abs_diff_sum += float(delta.abs().sum())
        self.abs_diff_max = max(self.abs_diff_max, float(delta.abs().max()))
        self.ratio_max = max(self.ratio_max, float(ratio.max()))
        self.ratio_min = min(self.ratio_min, float(ratio.min()))
        self.kl_sum += float((ratio - delta - 1).sum())  # k3 estimate of KL(sampler || learner)

    def as_dict(self) -> dict[str, float]:
        """verl's / prime-rl's rollout-vs-trainer figures; empty when nothing was compared."""
        if not self.tokens:
            return {}
        return {
            "tokens": float(self.tokens),
            "logprob_abs_diff_mean": self.abs_diff_sum / self.tokens,
            "logprob_abs_diff_max": self.abs_diff_max,
            "ratio_max": self.ratio_max,
            "ratio_min": self.ratio_min,
            "kl": self.kl_sum / self.tokens,
        }


@dataclass(frozen=True)
class RoleMetrics:
    samples: int
    """Samples that took part (not masked)."""
    with_gradient: int
    """Samples that carried gradient: not masked, and a nonzero advantage (or a KL term)."""
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
    mismatch: dict[str, float] = field(default_factory=dict)
    """Rollout-vs-learner logprob mismatch (`MismatchTally.as_dict`)."""

    def as_dict(self) -> dict[str, float]:
        """Flat metrics for logs: `loss`, `designer/clip_fraction`, `mismatch/kl`, ..."""
        flat = {k: float(v) for k, v in asdict(self).items() if k not in ("roles", "mismatch")}
        for role, metrics in self.roles.items():
            flat.update({f"{role}/{k}": float(v) for k, v in asdict(metrics).items()})
        flat.update({f"mismatch/{k}": v for k, v in self.mismatch.items()})
        return flat


def role_metrics(t: RoleTally) -> RoleMetrics:
    scored = max(t.scored_tokens, 1.0)
    return RoleMetrics(
        samples=t.samples,
        with_gradient=t.with_gradient,
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
