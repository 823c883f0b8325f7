"""The update's loss: hand-computed clip cases, TRL's own loss on the same inputs, and which
positions it can see (only the policy's completion tokens)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import AutoModelForCausalLM

from spade.rl.grpo import clipped_surrogate, completion_logprobs, token_weight
from spade.rl.samples import TokenizedSample, collate

RATIOS = [0.5, 0.9, 1.0, 1.2, 1.5]


def test_clipped_surrogate_against_hand_computed_values() -> None:
    logps = torch.log(torch.tensor([RATIOS, RATIOS])).requires_grad_()
    old = torch.zeros(2, 5)
    terms = clipped_surrogate(logps, old, torch.tensor([1.0, -1.0]), 0.2, 0.28)
    # A = +1: -min(r, clip(r, 0.8, 1.28)); a ratio above 1 + eps_high stops paying.
    # A = -1: max(r, clip(r)); a ratio below 1 - eps stops being rewarded for falling.
    expected = [[-0.5, -0.9, -1.0, -1.2, -1.28], [0.8, 0.9, 1.0, 1.2, 1.5]]
    assert torch.allclose(terms.per_token_loss, torch.tensor(expected))
    assert terms.is_clipped.tolist() == [
        [False, False, False, False, True],
        [True, False, False, False, False],
    ]
    assert terms.kl is None
    terms.per_token_loss.sum().backward()
    # d loss / d logp = -A * r on the unclipped branch, 0 where the clip holds it.
    expected_grad = [[-0.5, -0.9, -1.0, -1.2, 0.0], [0.0, 0.9, 1.0, 1.2, 1.5]]
    assert logps.grad is not None
    assert torch.allclose(logps.grad, torch.tensor(expected_grad))


def test_kl_term_is_k3_and_zero_at_the_reference() -> None:
    logps = torch.tensor([[-1.0, -2.0]])
    ref = torch.tensor([[-1.0, -1.5]])
    terms = clipped_surrogate(logps, logps, torch.tensor([0.0]), 0.2, 0.28, ref, beta=0.5)
    assert terms.kl is not None
    k3 = math.exp(0.5) - 0.5 - 1
    assert torch.allclose(terms.kl, torch.tensor([[0.0, k3]]))
    assert torch.allclose(terms.per_token_loss, 0.5 * terms.kl)
    with pytest.raises(ValueError, match="reference"):
        clipped_surrogate(logps, logps, torch.tensor([0.0]), 0.2, 0.28, None, beta=0.5)


def test_zero_advantage_gives_zero_gradient() -> None:
    logps = torch.log(torch.tensor([RATIOS])).requires_grad_()
    loss = clipped_surrogate(logps, torch.zeros(1, 5), torch.tensor([0.0]), 0.2, 0.28)
    loss.per_token_loss.sum().backward()
    assert logps.grad is not None and not logps.grad.any()


@pytest.mark.parametrize("loss_type", ["dapo", "grpo"])
def test_token_weights_sum_to_one_per_optimizer_step(loss_type: str) -> None:
    lengths = [3, 10, 1, 7]
    total = sum(n * token_weight(n, sum(lengths), len(lengths), loss_type) for n in lengths)
    assert total == pytest.approx(1.0)


def _batch() -> Any:
    samples = [
        TokenizedSample([5, 6, 7, 8], [9, 10, 2], 1.0, "agent", False, False),
        TokenizedSample([11, 12], [13, 14, 15, 16, 2], -0.7, "designer", False, False),
    ]
    return collate(samples, pad_id=2)


@pytest.mark.parametrize("loss_type", ["dapo", "grpo"])
def test_loss_equals_trls_grpo_loss_on_the_same_inputs(
    tiny_model_dir: Path, loss_type: str
) -> None:
    """Invariant against TRL's `GRPOTrainer._compute_loss` (token-level importance sampling)."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    args = GRPOConfig(
        output_dir=str(tiny_model_dir.parent / "trl-out"),
        per_device_train_batch_size=2,
        num_generations=2,
        report_to=[],
        use_cpu=True,
        bf16=False,
        epsilon=0.2,
        epsilon_high=0.28,
        beta=0.0,
        loss_type=loss_type,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=lambda completions, **_: [0.0] * len(completions),
        args=args,
        train_dataset=Dataset.from_dict({"prompt": ["a", "b"]}),
    )
    trainer.current_gradient_accumulation_steps = 1  # set by its training loop otherwise
    trainer.model.train()
    batch = _batch()
    width = batch.completion_width
    mask = batch.completion_mask[:, -width:]
    with torch.no_grad():
        logps, _ = completion_logprobs(trainer.model, batch, 1.0)
    # Old log-probs off by up to 0.5 nats, so both clip sides are exercised.
    old = logps + torch.tensor([[0.3, -0.3, 0.1, 0.0, 0.0], [0.5, -0.5, 0.2, -0.1, 0.05]])
    prompt_width = batch.input_ids.shape[1] - width
    inputs = {
        "prompt_ids": batch.input_ids[:, :prompt_width],
        "prompt_mask": batch.attention_mask[:, :prompt_width],
        "completion_ids": batch.input_ids[:, prompt_width:],
        "completion_mask": mask,
        "advantages": batch.advantages,
        "old_per_token_logps": old,
        "num_items_in_batch": mask.sum(),
    }
    theirs = trainer._compute_loss(trainer.model, inputs)

    logps, _ = completion_logprobs(trainer.model, batch, 1.0)
    terms = clipped_surrogate(logps, old, batch.advantages, 0.2, 0.28)
    n_tokens = int(mask.sum())
    weights = mask * torch.tensor(
        [[token_weight(int(row.sum()), n_tokens, 2, loss_type)] for row in mask]
    )
    ours = (terms.per_token_loss * weights).sum()
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-5)
    assert terms.is_clipped[mask.bool()].any()


def test_only_completion_positions_reach_the_loss(tiny_model_dir: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    captured: list[torch.Tensor] = []

    def keep_logits(_module: Any, _inputs: Any, output: torch.Tensor) -> None:
        output.retain_grad()
        captured.append(output)

    model.get_output_embeddings().register_forward_hook(keep_logits)
    batch = _batch()
    logps, _ = completion_logprobs(model, batch, 1.0)
    terms = clipped_surrogate(logps, logps.detach(), batch.advantages, 0.2, 0.28)
    width = batch.completion_width
    (terms.per_token_loss * batch.completion_mask[:, -width:]).sum().backward()
    [logits] = captured
    # Only the last width + 1 positions are projected to the vocabulary at all: prompt
    # logits do not exist, so they cannot enter the loss.
    assert logits.shape[1] == width + 1
    assert logits.grad is not None
    has_grad = logits.grad.abs().sum(dim=-1) > 0
    # Position j predicts completion token j: gradient exactly where a real one follows.
    predicts_completion = batch.completion_mask[:, -width:].bool()
    assert has_grad[:, :-1].tolist() == predicts_completion.tolist()
    assert not has_grad[:, -1].any()  # the last position predicts past the end


def test_logprobs_match_an_unpadded_full_forward(tiny_model_dir: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    batch = _batch()
    with torch.no_grad():
        logps, entropy = completion_logprobs(model, batch, 1.0)
        for row, (prompt, completion) in enumerate(
            [([5, 6, 7, 8], [9, 10, 2]), ([11, 12], [13, 14, 15, 16, 2])]
        ):
            full = torch.tensor([prompt + completion])
            log_softmax = model(full).logits[0].log_softmax(-1)
            expected = [
                float(log_softmax[len(prompt) - 1 + i, t]) for i, t in enumerate(completion)
            ]
            assert logps[row, : len(completion)].tolist() == pytest.approx(expected, abs=1e-5)
    assert (entropy >= 0).all()
