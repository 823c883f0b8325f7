"""Per-role advantages for the one-policy, two-role GRPO update (pure numpy).

Agent: normalised within the plays of one env, (r − mean) / (std + eps), so easy and hard
envs weigh the same. Designer: centred within its group (the envs written for one skill or
prompt), r − mean, with NO division by the std: dividing would blow a group of near-equal
rewards up to ±1 and teach the designer from noise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

EPS = 1e-6

FloatArray = npt.NDArray[np.float64]


def agent_advantages(
    returns: Sequence[float] | npt.ArrayLike,
    mask: Sequence[bool] | npt.ArrayLike | None = None,
    eps: float = EPS,
) -> FloatArray:
    """(r − mean) / (std + eps) over the plays of one env; masked-out plays get 0.

    `mask[i]` is True where play i counts (it terminated) and False where it was truncated:
    a truncated play is not a failure to learn from, so it gets advantage 0 and is left out
    of the mean and std. The std is the population std (ddof=0), so a lone counted play and
    a group of equal returns get 0 rather than NaN.
    """
    values = np.asarray(returns, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"returns must be one-dimensional, got shape {values.shape}")
    keep = np.ones(values.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if keep.shape != values.shape:
        raise ValueError(f"mask has shape {keep.shape}, returns {values.shape}")
    if not np.all(np.isfinite(values[keep])):
        raise ValueError("returns must be finite")
    advantages = np.zeros_like(values)
    counted = values[keep]
    # Equal returns carry no signal; comparing exactly avoids rounding noise / eps.
    if counted.size and not np.all(counted == counted[0]):
        advantages[keep] = (counted - counted.mean()) / (counted.std() + eps)
    return advantages


def designer_advantages(
    rewards_by_group: Mapping[str, Sequence[float | None]],
) -> dict[str, FloatArray]:
    """r − mean(group) within each group; no std division.

    A None reward (an invalid env with no penalty configured) gets advantage 0 and is left out
    of its group's mean, so it adds nothing to the update.
    """
    result: dict[str, FloatArray] = {}
    for group, rewards in rewards_by_group.items():
        keep = np.array([r is not None for r in rewards], dtype=bool)
        values = np.array([0.0 if r is None else r for r in rewards], dtype=np.float64)
        if not np.all(np.isfinite(values)):
            raise ValueError(f"designer rewards of group {group!r} must be finite")
        advantages = np.zeros_like(values)
        if keep.any():
            advantages[keep] = values[keep] - values[keep].mean()
        result[group] = advantages
    return result
