"""The designer's update: each design's reward from its env's plays, centred within its group
(the design prompt), as the designer's training samples."""

from __future__ import annotations

from collections.abc import Sequence

from spade.models.policy import Completion
from spade.rl.advantages import designer_advantages
from spade.rl.samples import TrainingSample
from spade.selfplay.agent_step import EnvPlays
from spade.selfplay.config import RewardConfig
from spade.selfplay.design_step import Candidate
from spade.selfplay.rewards import DesignOutcome, SkillEMA, designer_reward


def designer_rewards(
    candidates: Sequence[Candidate],
    results: Sequence[EnvPlays | None],
    reward: RewardConfig,
    ema: SkillEMA,
) -> dict[str, list[float | None]]:
    """Each candidate's reward under `reward.kind` from its env's plays (None: it was not
    valid), by group (the design prompt), in the candidates' order. A design's slow EMA is
    its skill's before this iteration's plays."""
    groups: dict[str, list[float | None]] = {}
    for candidate, result in zip(candidates, results, strict=True):
        outcome = None
        if result is not None:
            outcome = DesignOutcome.of(result, ema.get(candidate.request.skill))
        value = designer_reward(outcome, reward)
        groups.setdefault(candidate.group, []).append(value)
    return groups


def designer_samples(
    candidates: Sequence[Candidate], rewards: dict[str, list[float | None]]
) -> list[TrainingSample]:
    """The designer's samples: each candidate's reward (`designer_rewards`) centred within its
    group; none for a reward of None (an invalid env, no penalty configured)."""
    advantages = designer_advantages(rewards)
    position = {group: 0 for group in rewards}
    samples = []
    for candidate in candidates:
        index = position[candidate.group]
        position[candidate.group] += 1
        if rewards[candidate.group][index] is None:
            continue  # no gradient for an invalid env unless a penalty is configured
        sample = designer_sample(candidate.completion, float(advantages[candidate.group][index]))
        if sample is not None:
            samples.append(sample)
    return samples


def designer_sample(completion: Completion, advantage: float) -> TrainingSample | None:
    """The designer's completion as sampled; None for an empty one (nothing to learn)."""
    if completion.prompt_token_ids is None or completion.token_ids is None:
        raise RuntimeError("training needs a generation backend that returns token ids")
    if not completion.token_ids:
        return None
    logprobs = tuple(completion.logprobs) if completion.logprobs is not None else None
    return TrainingSample(
        tuple(completion.prompt_token_ids),
        tuple(completion.token_ids),
        advantage,
        "designer",
        sampled_logprobs=logprobs,
    )
