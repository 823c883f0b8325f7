"""The policy update: one policy, two roles (designer, agent), GRPO-style on TRL."""

# The update's modules import torch, transformers and trl, so they load on first use:
# `spade.rl.advantages` (numpy only) and the types stay cheap to import.
from __future__ import annotations

from typing import TYPE_CHECKING

from spade.lazy import lazy_attributes

if TYPE_CHECKING:
    from spade.rl.checkpoint import latest_checkpoint, list_checkpoints
    from spade.rl.config import UpdateConfig
    from spade.rl.grpo import clipped_surrogate, grpo_update
    from spade.rl.learner import CheckpointError, Learner, LearnerError
    from spade.rl.metrics import RoleMetrics, UpdateMetrics
    from spade.rl.samples import TrainingSample

_LAZY = {
    "CheckpointError": "spade.rl.learner",
    "Learner": "spade.rl.learner",
    "LearnerError": "spade.rl.learner",
    "RoleMetrics": "spade.rl.metrics",
    "TrainingSample": "spade.rl.samples",
    "UpdateConfig": "spade.rl.config",
    "UpdateMetrics": "spade.rl.metrics",
    "clipped_surrogate": "spade.rl.grpo",
    "grpo_update": "spade.rl.grpo",
    "latest_checkpoint": "spade.rl.checkpoint",
    "list_checkpoints": "spade.rl.checkpoint",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "CheckpointError",
    "Learner",
    "LearnerError",
    "RoleMetrics",
    "TrainingSample",
    "UpdateConfig",
    "UpdateMetrics",
    "clipped_surrogate",
    "grpo_update",
    "latest_checkpoint",
    "list_checkpoints",
]
