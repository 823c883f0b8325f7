"""Designer rewards: what an accepted env earns its designer, from how the agent did on it.

Each reward is a plain callable `reward(outcome, config) -> float` in DESIGNER_REWARDS, in the
manner of TRL's reward functions: `outcome` (a DesignOutcome) is what the agent's plays of
one design measured — the no-hint win rate `w` (share of no-hint plays solved), the regret
(mean hinted return − mean unhinted return, same plays count and seeds) and the slow EMA of
`w` for the design's skill — and `config` is the run's `reward:` section
(spade.selfplay.config.RewardConfig), which holds every constant. The reference default is
"blend"; "regret", "solve_rate" and "learning_potential" are the paper's ablations. An
invalid env (failed validation after all attempts) gets no reward at all (None: it takes no
part in the update) unless a penalty is configured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # both import this module
    from spade.selfplay.agent_step import EnvPlays
    from spade.selfplay.config import RewardConfig


@dataclass(frozen=True)
class DesignOutcome:
    """What the agent's plays of one valid design measured."""

    win_rate: float
    """No-hint win rate w: the share of the no-hint plays solved."""
    regret: float | None = None
    """Mean hinted return − mean unhinted return; None: the env was not played with its hint."""
    slow_ema: float | None = None
    """The slow EMA of w for the design's skill before this design; None: its skill's first."""

    @classmethod
    def of(cls, plays: EnvPlays, slow_ema: float | None = None) -> DesignOutcome:
        """The outcome of an env's plays (`EnvPlays.win_rate` and `.regret`)."""
        return cls(plays.win_rate, plays.regret, slow_ema)

    def measured_regret(self) -> float:
        if self.regret is None:
            raise ValueError("this designer reward needs regret: play the env with its hint too")
        return self.regret


DesignerReward = Callable[[DesignOutcome, "RewardConfig"], float]


def blend(outcome: DesignOutcome, config: RewardConfig) -> float:
    """w_plateau · plateau(w) + w_regret · clip(regret / regret_scale, 0, 1): with the default
    constants 0.6 · plateau(w) + 0.4 · clip(regret / 0.15, 0, 1), the reference default.

    Plateau alone rewards envs that look half-solvable, which bimodal or noisy envs fake;
    the regret term asks that a strategy (the hint) actually helps.
    """
    band = plateau(outcome.win_rate, config.plateau_low, config.plateau_high, config.plateau_width)
    score = regret_score(outcome.measured_regret(), config.regret_scale)
    return config.w_plateau * band + config.w_regret * score


def regret_reward(outcome: DesignOutcome, config: RewardConfig) -> float:
    """Pure-regret ablation: the regret itself, in [-1, 1] (unscaled, unclipped: a hint that
    hurts is penalised). Unbounded minimax-style rewards push designers towards envs only
    solvable with the hint; this ablation shows that."""
    value = outcome.measured_regret()
    if not -1.0 <= value <= 1.0:
        raise ValueError(f"regret must lie in [-1, 1] (returns are in [0, 1]), not {value}")
    return value


def solve_rate(outcome: DesignOutcome, config: RewardConfig) -> float:
    """Solve-rate ablation: plateau(w) alone."""
    return plateau(outcome.win_rate, config.plateau_low, config.plateau_high, config.plateau_width)


def learning_potential(outcome: DesignOutcome, config: RewardConfig) -> float:
    """Learning-potential ablation: |w − slow EMA of w for the env's skill|.

    High when the agent's success on this skill moved away from its long-run average, i.e.
    where it is currently learning (or forgetting). A skill's first env scores 0: there is
    no average to compare with yet.
    """
    _check_unit("win rate", outcome.win_rate)
    if outcome.slow_ema is None:
        return 0.0
    _check_unit("slow EMA", outcome.slow_ema)
    return abs(outcome.win_rate - outcome.slow_ema)


DESIGNER_REWARDS: dict[str, DesignerReward] = {
    "blend": blend,
    "regret": regret_reward,
    "solve_rate": solve_rate,
    "learning_potential": learning_potential,
}
"""Every designer reward by its name, the values `reward.kind` takes ("blend": the default)."""

NEEDS_REGRET = frozenset({"blend", "regret"})
"""The rewards that read regret, so need the hinted plays (tests check it on the callables)."""


def designer_reward(outcome: DesignOutcome | None, config: RewardConfig) -> float | None:
    """The designer's reward for one env under reward `config.kind` (a DESIGNER_REWARDS key).

    `outcome` None: the env was invalid, and earns `config.invalid_penalty` (None by default:
    no reward, no gradient).
    """
    reward = DESIGNER_REWARDS.get(config.kind)
    if reward is None:
        raise ValueError(f"unknown designer reward {config.kind!r}; use one of {reward_kinds()}")
    return config.invalid_penalty if outcome is None else reward(outcome, config)


def reward_kinds() -> str:
    """The registry's names, for messages: "blend, regret, ..."."""
    return ", ".join(DESIGNER_REWARDS)


def groups_with_signal(rewards: Mapping[str, Sequence[float | None]]) -> float:
    """The share of design groups (the designs of one prompt) with at least two rewards that
    differ: only those give the designer a nonzero centred advantage. A group of one design,
    or whose rewards are all None (invalid designs, no penalty) or all equal, has no signal.
    NaN without groups (nothing was designed)."""
    if not rewards:
        return float("nan")
    signal = [len({r for r in group if r is not None}) > 1 for group in rewards.values()]
    return sum(signal) / len(signal)


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


def plateau(w: float, low: float, high: float, width: float) -> float:
    """plateau(w) = 1 if low ≤ w ≤ high, else max(0, 1 − distance(w, [low, high]) / width).

    Envs the agent solves about half the time score best; the score falls linearly to 0 at
    `width` outside the band (w ≤ 0.15 or w ≥ 0.85 with the default 0.4, 0.6 and 0.25).
    """
    _check_unit("win rate", w)
    distance = low - w if w < low else w - high if w > high else 0.0
    return max(0.0, 1.0 - distance / width)


def regret_score(regret: float, scale: float) -> float:
    """clip(regret / scale, 0, 1): a hint worth `scale` of return or more scores fully."""
    return min(1.0, max(0.0, regret / scale))


@dataclass
class SkillEMA:
    """A slow exponential moving average of the no-hint win rate, per skill.

    ema ← (1 − alpha) · ema + alpha · w; a skill's first observation starts its average.
    `alpha` is the run's `reward.ema_alpha`.
    """

    alpha: float
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


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _check_unit(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise ValueError(f"{name} must lie in [0, 1], not {value}")
