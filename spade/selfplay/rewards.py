"""Designer rewards: what an accepted env earns its designer, from how the agent did on it.

Inputs are measured per env: the no-hint win rate `w` (share of no-hint plays solved) and the
regret (mean hinted return − mean unhinted return, same plays count and seeds). The reference
default is "blend"; "regret", "solve_rate" and "learning_potential" are the paper's ablations.
An invalid env (failed validation after all attempts) gets no reward at all (None: it takes
no part in the update) unless a penalty is configured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

DesignerRewardKind = Literal["blend", "regret", "solve_rate", "learning_potential"]
DESIGNER_REWARDS: tuple[DesignerRewardKind, ...] = (
    "blend",
    "regret",
    "solve_rate",
    "learning_potential",
)


def regret(hinted_returns: Sequence[float], unhinted_returns: Sequence[float]) -> float:
    """regret = mean(hinted returns) − mean(unhinted returns).

    The two lists must have the same length (the plays are paired by seed: measuring them
    with different counts or seeds confounds the hint's effect with the seeds' difficulty).
    A return is the final reward of a terminated play and 0 for a truncated one.
    """
    if len(hinted_returns) != len(unhinted_returns):
        raise ValueError(
            f"regret needs matched plays: {len(hinted_returns)} hinted vs "
            f"{len(unhinted_returns)} unhinted returns"
        )
    if not hinted_returns:
        raise ValueError("regret needs at least one play with and without the hint")
    return _mean(hinted_returns) - _mean(unhinted_returns)


def win_rate(returns: Sequence[float], success: float = 1.0) -> float:
    """w = share of plays whose return reaches `success` (1.0 = solved, by the env contract)."""
    if not returns:
        raise ValueError("win rate needs at least one play")
    return sum(1 for r in returns if r >= success) / len(returns)


def plateau(w: float, low: float = 0.4, high: float = 0.6, width: float = 0.25) -> float:
    """plateau(w) = 1 if low ≤ w ≤ high, else max(0, 1 − distance(w, [low, high]) / width).

    Envs the agent solves about half the time score best; the score falls linearly to 0 at
    `width` outside the band (w ≤ 0.15 or w ≥ 0.85 with the defaults).
    """
    _check_unit("win rate", w)
    distance = low - w if w < low else w - high if w > high else 0.0
    return max(0.0, 1.0 - distance / width)


def regret_score(regret: float, scale: float = 0.15) -> float:
    """clip(regret / scale, 0, 1): a hint worth `scale` of return or more scores fully."""
    return min(1.0, max(0.0, regret / scale))


def blend(
    win_rate: float,
    regret: float,
    w_plateau: float = 0.6,
    w_regret: float = 0.4,
    regret_scale: float = 0.15,
) -> float:
    """blend = 0.6 · plateau(w) + 0.4 · clip(regret / 0.15, 0, 1) (the reference default).

    Plateau alone rewards envs that look half-solvable, which bimodal or noisy envs fake;
    the regret term asks that a strategy (the hint) actually helps.
    """
    return w_plateau * plateau(win_rate) + w_regret * regret_score(regret, regret_scale)


def solve_rate_reward(win_rate: float) -> float:
    """Solve-rate ablation: plateau(w) alone."""
    return plateau(win_rate)


def regret_reward(regret: float) -> float:
    """Pure-regret ablation: the regret itself, in [-1, 1] (unscaled, unclipped: a hint that
    hurts is penalised). Unbounded minimax-style rewards push designers towards envs only
    solvable with the hint; this ablation shows that."""
    if not -1.0 <= regret <= 1.0:
        raise ValueError(f"regret must lie in [-1, 1] (returns are in [0, 1]), not {regret}")
    return regret


def learning_potential(win_rate: float, slow_ema: float) -> float:
    """Learning-potential ablation: |w − slow EMA of w for the env's skill|.

    High when the agent's success on this skill moved away from its long-run average, i.e.
    where it is currently learning (or forgetting).
    """
    _check_unit("win rate", win_rate)
    _check_unit("slow EMA", slow_ema)
    return abs(win_rate - slow_ema)


@dataclass
class SkillEMA:
    """A slow exponential moving average of the no-hint win rate, per skill.

    ema ← (1 − alpha) · ema + alpha · w; a skill's first observation starts its average.
    """

    alpha: float = 0.05
    values: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha <= 1.0:
            raise ValueError(f"alpha must lie in (0, 1], not {self.alpha}")

    def get(self, skill: str) -> float | None:
        return self.values.get(skill)

    def update(self, skill: str, win_rate: float) -> float:
        _check_unit("win rate", win_rate)
        old = self.values.get(skill)
        new = win_rate if old is None else (1 - self.alpha) * old + self.alpha * win_rate
        self.values[skill] = new
        return new

    def reward(self, skill: str, win_rate: float) -> float:
        """learning_potential against the average *before* this observation (0 for a skill's
        first env: nothing to compare with), then fold the observation in."""
        old = self.values.get(skill)
        value = 0.0 if old is None else learning_potential(win_rate, old)
        self.update(skill, win_rate)
        return value


@dataclass(frozen=True)
class DesignerRewardConfig:
    """Constants of the designer rewards (defaults: the reference code's)."""

    plateau_low: float = 0.4
    """Lower edge of the win-rate band that scores a full plateau."""
    plateau_high: float = 0.6
    """Upper edge of that band."""
    plateau_width: float = 0.25
    """Distance outside the band at which the plateau score reaches 0."""
    w_plateau: float = 0.6
    """Blend weight of the plateau term."""
    w_regret: float = 0.4
    """Blend weight of the regret term."""
    regret_scale: float = 0.15
    """Regret at which the blend's regret term saturates at 1."""
    invalid_penalty: float | None = None
    """Reward of an env that failed validation; None: no reward, no gradient."""


def designer_reward(
    kind: str,
    *,
    valid: bool = True,
    win_rate: float | None = None,
    regret: float | None = None,
    slow_ema: float | None = None,
    config: DesignerRewardConfig | None = None,
) -> float | None:
    """The designer's reward for one env under reward `kind` (one of DESIGNER_REWARDS).

    Invalid env: `config.invalid_penalty` (None by default: no gradient). Valid env: needs
    `win_rate` (all kinds but "regret"), `regret` ("blend", "regret") and `slow_ema`
    ("learning_potential": the skill's average before this env).
    """
    config = config or DesignerRewardConfig()
    if kind not in DESIGNER_REWARDS:
        raise ValueError(
            f"unknown designer reward {kind!r}; use one of {', '.join(DESIGNER_REWARDS)}"
        )
    if not valid:
        return config.invalid_penalty

    def need(name: str, value: float | None) -> float:
        if value is None:
            raise ValueError(f"designer reward {kind!r} needs {name}")
        return value

    if kind == "regret":
        return regret_reward(need("regret", regret))
    w = need("win_rate", win_rate)
    if kind == "learning_potential":
        return learning_potential(w, need("slow_ema", slow_ema))
    band = plateau(w, config.plateau_low, config.plateau_high, config.plateau_width)
    if kind == "solve_rate":
        return band
    score = regret_score(need("regret", regret), config.regret_scale)
    return config.w_plateau * band + config.w_regret * score


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _check_unit(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise ValueError(f"{name} must lie in [0, 1], not {value}")
