"""Truncated importance sampling and the mismatch figures, on hand-made logprobs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from spade.rl.config import UpdateConfig
from spade.rl.grpo import tis_weights
from spade.rl.metrics import MismatchTally


def test_tis_weights_are_the_learner_over_sampler_ratio_capped() -> None:
    old = torch.tensor([[-1.0, -2.0, -0.5]])
    sampled = torch.tensor([[-1.0, -1.0, -3.0]])
    weights = tis_weights(old, sampled, cap=2.0)
    assert weights.tolist()[0] == pytest.approx([1.0, float(torch.exp(torch.tensor(-1.0))), 2.0])
    assert not weights.requires_grad


def test_mismatch_tally_reports_verl_style_figures_on_masked_tokens() -> None:
    tally = MismatchTally()
    learner = torch.tensor([[-1.0, -2.0, -9.0]])
    sampler = torch.tensor([[-1.1, -1.5, 0.0]])
    mask = torch.tensor([[1, 1, 0]])  # the last position is padding
    tally.add(learner, sampler, mask)
    figures = tally.as_dict()
    assert figures["tokens"] == 2
    assert figures["logprob_abs_diff_mean"] == pytest.approx(0.3)
    assert figures["logprob_abs_diff_max"] == pytest.approx(0.5)
    assert figures["ratio_max"] == pytest.approx(float(torch.exp(torch.tensor(0.1))))
    assert figures["ratio_min"] == pytest.approx(float(torch.exp(torch.tensor(-0.5))))
    assert figures["kl"] > 0
    assert MismatchTally().as_dict() == {}  # nothing compared: nothing reported


def test_tis_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="tis_cap must be >= 1"):
        UpdateConfig(tis_cap=0.5)


def test_tis_down_weights_tokens_the_sampler_found_likelier(tiny_model_dir: Path) -> None:
    """A sampler that put far more mass on the tokens than the learner does gets weight
    ~exp(-10) per token under TIS, so its gradient is ~exp(-10) of the uncorrected one."""
    from spade.rl import Learner
    from spade.rl.grpo import completion_logprobs
    from spade.rl.samples import collate, fit_sample
    from tests.rl.token_samples import sample

    plain = sample([{"role": "user", "content": "Open the door."}], "\\boxed{open}", 1.0, "agent")
    moved = {}
    for cap in (None, 2.0):
        learner = Learner(tiny_model_dir, UpdateConfig(lr=1e-2, tis_cap=cap))
        batch = collate([fit_sample(plain, 512)], learner.tokenizer.pad_token_id)
        with torch.no_grad():
            own = completion_logprobs(learner.model, batch, 1.0)[0][0].tolist()
        skewed = replace(plain, sampled_logprobs=tuple(lp + 10.0 for lp in own))
        metrics = learner.update([skewed]).as_dict()
        assert metrics["mismatch/logprob_abs_diff_max"] == pytest.approx(10.0, abs=1e-3)
        moved[cap] = metrics["grad_norm"]
    assert moved[2.0] == pytest.approx(moved[None] * float(torch.exp(torch.tensor(-10.0))),
                                       rel=1e-2)  # fmt: skip


def test_an_update_with_only_zero_advantages_still_measures_the_mismatch(
    tiny_model_dir: Path,
) -> None:
    """Unmasked samples whose advantages are all zero run no micro-batch; the mismatch is
    then probed, so every iteration logs it (a fixed-arm iteration once logged none)."""
    from spade.rl import Learner
    from spade.rl.grpo import completion_logprobs
    from spade.rl.samples import collate, fit_sample
    from tests.rl.token_samples import sample

    flat = sample([{"role": "user", "content": "Open the door."}], "\\boxed{open}", 0.0, "agent")
    learner = Learner(tiny_model_dir, UpdateConfig(lr=1e-2))
    batch = collate([fit_sample(flat, 512)], learner.tokenizer.pad_token_id)
    with torch.no_grad():
        own = completion_logprobs(learner.model, batch, 1.0)[0][0].tolist()
    shifted = replace(flat, sampled_logprobs=tuple(lp - 0.5 for lp in own))
    metrics = learner.update([shifted]).as_dict()
    assert metrics["optimizer_steps"] == 0
    assert metrics["mismatch/logprob_abs_diff_max"] == pytest.approx(0.5, abs=1e-3)


@pytest.mark.parametrize("advantage", [1.0, 0.0])  # a micro-batch runs / only the probe runs
def test_each_role_is_scored_at_the_temperature_it_was_sampled_at(
    tiny_model_dir: Path, advantage: float
) -> None:
    """A designer sampled at 0.5 and an agent at 1.5: with the roles' temperatures the
    learner's logprobs are the sampler's (no mismatch); scored at one shared temperature,
    the other role's are not."""
    from spade.rl import Learner
    from spade.rl.grpo import completion_logprobs
    from spade.rl.samples import collate, fit_sample
    from tests.rl.token_samples import sample

    temperatures = {"designer": 0.5, "agent": 1.5}
    samples = []
    for role, temperature in temperatures.items():
        plain = sample([{"role": "user", "content": f"Write as the {role}."}], "\\boxed{ok}",
                       advantage, role)  # fmt: skip
        learner = Learner(tiny_model_dir, UpdateConfig())
        batch = collate([fit_sample(plain, 512)], learner.tokenizer.pad_token_id)
        with torch.no_grad():
            sampled = completion_logprobs(learner.model, batch, temperature)[0][0].tolist()
        samples.append(replace(plain, sampled_logprobs=tuple(sampled)))
    per_role = Learner(tiny_model_dir, UpdateConfig(lr=1e-9, role_temperatures=temperatures))
    assert per_role.update(samples).as_dict()["mismatch/logprob_abs_diff_max"] < 1e-4
    shared = Learner(tiny_model_dir, UpdateConfig(lr=1e-9, temperature=0.5))
    assert shared.update(samples).as_dict()["mismatch/logprob_abs_diff_max"] > 0.01


def test_role_temperatures_name_a_role_and_a_positive_value() -> None:
    assert UpdateConfig(role_temperatures={"designer": 0.4}).temperature_of("designer") == 0.4
    assert UpdateConfig(temperature=0.7).temperature_of("agent") == 0.7
    for bad in ({"hint": 0.5}, {"agent": 0.0}):
        with pytest.raises(ValueError, match="role_temperatures"):
            UpdateConfig(role_temperatures=bad)


@pytest.mark.parametrize(("grad_accum", "forwards"), [(None, 2), (1, 4)])
def test_one_step_scores_the_mismatch_in_its_gradient_pass(
    tiny_model_dir: Path, grad_accum: int | None, forwards: int
) -> None:
    """One pass and one optimizer step: no weight has moved when any micro-batch runs, so the
    gradient pass's own logprobs are the ratio's denominator, the TIS weights' and the
    mismatch's: one forward per micro-batch. Two steps (grad_accum 1, micro-batches of 1)
    score every micro-batch up front as well, before the first step moves the weights."""
    from spade.rl import Learner
    from spade.rl.grpo import completion_logprobs
    from spade.rl.samples import collate, fit_sample
    from tests.rl.token_samples import sample

    config = UpdateConfig(lr=1e-2, micro_batch_size=1, grad_accum=grad_accum, tis_cap=2.0)
    learner = Learner(tiny_model_dir, config)
    skewed = []
    for advantage, text in ((1.0, "\\boxed{open}"), (-1.0, "\\boxed{wait}")):
        plain = sample([{"role": "user", "content": "Open the door."}], text, advantage, "agent")
        batch = collate([fit_sample(plain, 512)], learner.tokenizer.pad_token_id)
        with torch.no_grad():
            own = completion_logprobs(learner.model, batch, 1.0)[0][0].tolist()
        skewed.append(replace(plain, sampled_logprobs=tuple(lp - 0.25 for lp in own)))
    calls = []
    hook = learner.model.register_forward_hook(lambda *_: calls.append(1))
    try:
        metrics = learner.update(skewed).as_dict()
    finally:
        hook.remove()
    assert len(calls) == forwards
    assert metrics["optimizer_steps"] == forwards // 2
    assert metrics["mismatch/tokens"] > 0
    assert metrics["mismatch/logprob_abs_diff_max"] == pytest.approx(0.25, abs=1e-3)
