"""The Learner on a tiny real Llama: update direction, no-signal updates, clipping, exact
resume from a checkpoint, HF export, LoRA, and rollouts on the live model."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM

from spade.models import SamplingParams, load_policy
from spade.rl import (
    CheckpointError,
    Learner,
    TrainingSample,
    UpdateConfig,
    latest_checkpoint,
    list_checkpoints,
)
from spade.rl.grpo import completion_logprobs
from spade.rl.samples import collate, fit_sample
from tests.rl.token_samples import sample

PROMPT_A = [{"role": "user", "content": "Open the door."}]
PROMPT_B = [{"role": "user", "content": "Write an environment about mazes."}]
GOOD = sample(PROMPT_A, "\\boxed{open door}", 1.0, "agent")
BAD = sample(PROMPT_B, "class MazeEnv: pass", -1.0, "designer")
BATCH_1 = [GOOD, BAD, sample(PROMPT_A, "\\boxed{wait}", -0.5, "agent")]
BATCH_2 = [
    sample(PROMPT_B, "class RoomEnv:\n    pass", 0.7, "designer"),
    sample(PROMPT_A, "\\boxed{look}", 0.3, "agent"),
]


def logprob(learner: Learner, one: TrainingSample) -> float:
    t = fit_sample(one, 512)
    batch = collate([t], learner.tokenizer.pad_token_id).to(learner.device)
    with torch.no_grad():
        return float(completion_logprobs(learner.model, batch, 1.0)[0].sum())


def weights(learner: Learner) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in learner.model.named_parameters()}


def optimizer_state(learner: Learner) -> list[torch.Tensor]:
    return [t.clone() for s in learner.optimizer.state.values() for t in s.values()]


def test_positive_advantage_raises_a_completions_logprob_and_negative_lowers_it(
    tiny_model_dir: Path,
) -> None:
    learner = Learner(tiny_model_dir, UpdateConfig(lr=1e-3))
    before_good, before_bad = logprob(learner, GOOD), logprob(learner, BAD)
    metrics = learner.update([GOOD, BAD])
    assert logprob(learner, GOOD) > before_good
    assert logprob(learner, BAD) < before_bad
    assert learner.step == 1 and metrics.optimizer_steps == 1
    assert set(metrics.roles) == {"agent", "designer"}
    agent = metrics.roles["agent"]
    assert agent.ratio_mean == pytest.approx(1.0) and agent.clip_fraction == 0.0
    assert agent.tokens == len(fit_sample(GOOD, 512).completion_ids)
    assert agent.grad_norm > 0 and metrics.roles["designer"].grad_norm > 0
    assert agent.loss == pytest.approx(-1.0)  # -A at ratio 1
    flat = metrics.as_dict()
    assert flat["designer/loss"] == pytest.approx(1.0) and "grad_norm" in flat


def test_no_signal_leaves_weights_and_optimizer_untouched(tiny_model_dir: Path) -> None:
    learner = Learner(tiny_model_dir, UpdateConfig(lr=1e-2))
    learner.update([GOOD])  # so the optimizer has momentum a zero-gradient step would apply
    before, state = weights(learner), optimizer_state(learner)
    zero = sample(PROMPT_A, "\\boxed{wait}", 0.0, "agent")
    masked = sample(PROMPT_B, "class X: pass", 5.0, "designer", masked=True)
    metrics = learner.update([zero, masked])
    after = weights(learner)
    assert all(torch.equal(before[n], after[n]) for n in before)
    assert all(torch.equal(x, y) for x, y in zip(optimizer_state(learner), state, strict=True))
    assert metrics.optimizer_steps == 0 and metrics.skipped_steps == 1
    assert metrics.roles["designer"].masked == 1 and metrics.roles["designer"].samples == 0
    assert metrics.roles["agent"].tokens > 0  # counted in the normaliser, not run


def test_several_passes_clip_and_measure_kl(tiny_model_dir: Path) -> None:
    config = UpdateConfig(lr=3e-2, num_iterations=3, beta=0.1, micro_batch_size=1)
    learner = Learner(tiny_model_dir, config)
    metrics = learner.update([GOOD, BAD])
    assert metrics.optimizer_steps == 3
    for role in metrics.roles.values():
        assert role.ratio_mean != pytest.approx(1.0)  # later passes see the moved policy
        assert role.kl > 0
    assert sum(role.clip_fraction for role in metrics.roles.values()) > 0


def test_resume_from_a_checkpoint_gives_the_identical_next_update(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    config = UpdateConfig(lr=1e-2, grad_accum=1, micro_batch_size=1)  # several steps, shuffled
    first = Learner(tiny_model_dir, config)
    first.update(BATCH_1)
    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    root = tmp_path / "checkpoints"
    saved = first.save_checkpoint(root, extra=lambda d: (d / "memory.json").write_text("[]"))
    draws = (random.random(), float(np.random.rand()), float(torch.rand(1)))
    expected = first.update(BATCH_2)

    resumed = Learner(tiny_model_dir, config)
    assert resumed.load_checkpoint(root) == saved
    assert (saved / "memory.json").read_text() == "[]"
    assert resumed.step == 1 and resumed.optimizer_steps == first.optimizer_steps - 2
    assert (random.random(), float(np.random.rand()), float(torch.rand(1))) == draws
    got = resumed.update(BATCH_2)
    a, b = weights(first), weights(resumed)
    assert all(torch.equal(a[n], b[n]) for n in a)
    assert {**got.as_dict(), "seconds": 0} == {**expected.as_dict(), "seconds": 0}


@pytest.mark.parametrize(
    "damaged", ["trainable.safetensors", "optimizer.pt", "rng.pt", "learner.json"]
)
def test_a_damaged_checkpoint_is_a_one_line_error_that_leaves_the_learner_as_it_was(
    tiny_model_dir: Path, tmp_path: Path, damaged: str
) -> None:
    config = UpdateConfig(lr=1e-2)
    trained = Learner(tiny_model_dir, config)
    trained.update(BATCH_1)
    saved = trained.save_checkpoint(tmp_path / "checkpoints")
    (saved / damaged).write_bytes(b"\x00 not what was written")
    fresh = Learner(tiny_model_dir, config)
    before = weights(fresh)
    with pytest.raises(CheckpointError, match=r"step-000001: cannot read it \(") as caught:
        fresh.load_checkpoint(tmp_path / "checkpoints")
    assert "\n" not in str(caught.value)
    assert fresh.step == 0 and all(torch.equal(before[n], w) for n, w in weights(fresh).items())


def test_only_complete_checkpoints_count_and_old_ones_are_pruned(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    learner = Learner(tiny_model_dir, UpdateConfig())
    root = tmp_path / "ckpt"
    for step in range(3):
        learner.step = step
        learner.save_checkpoint(root, keep_last=2)
    assert [p.name for p in list_checkpoints(root)] == ["step-000001", "step-000002"]
    (root / "step-000007").mkdir()  # a dir without the learner's marker is not a checkpoint
    (root / ".step-000008.partial-x").mkdir()  # what a killed save leaves
    assert latest_checkpoint(root) == root / "step-000002"

    def killed(_: Path) -> None:
        raise KeyboardInterrupt

    with pytest.raises(FileExistsError, match="not written by spade"):
        learner.export_hf(root)  # never deletes a directory it did not write
    learner.step = 9
    with pytest.raises(KeyboardInterrupt):
        learner.save_checkpoint(root, extra=killed)
    assert latest_checkpoint(root) == root / "step-000002"
    assert not list(root.glob(".step-000009.partial-*"))


def test_export_is_a_plain_hf_dir_that_spade_eval_loads(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    learner = Learner(tiny_model_dir, UpdateConfig(lr=1e-2))
    learner.update([GOOD, BAD])
    out = learner.export_hf(tmp_path / "final")
    ids = torch.tensor([[1, 504, 1115, 30, 2]])
    exported = AutoModelForCausalLM.from_pretrained(out)
    with torch.no_grad():
        assert torch.equal(exported(ids).logits, learner.model(ids).logits)
    greedy = SamplingParams(max_new_tokens=6)
    from_dir = load_policy(str(out)).generate([PROMPT_A], greedy)
    assert from_dir[0].text == learner.policy().generate([PROMPT_A], greedy)[0].text
    assert json.loads((out / "spade-export.json").read_text())["step"] == 1


def test_policy_generates_with_the_live_model(tiny_model_dir: Path) -> None:
    learner = Learner(tiny_model_dir, UpdateConfig(lr=1e-2))
    policy = learner.policy()
    assert policy.model is learner.model
    sampling = SamplingParams(max_new_tokens=4, logprobs=True)
    before = policy.generate([PROMPT_A], sampling)[0]
    learner.model.train()
    learner.update([GOOD])
    assert learner.model.training  # generation and the update each put the mode back
    after = policy.generate([PROMPT_A], sampling)[0]
    assert before.logprobs != after.logprobs  # the same policy object sees the update


def test_lora_trains_adapters_only_and_export_merges_them(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    config = UpdateConfig(lr=1e-2, lora=True, lora_r=4, lora_alpha=8)
    learner = Learner(tiny_model_dir, config)
    trainable = {n for n, p in learner.model.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)
    before = weights(learner)
    learner.update([GOOD, BAD])
    after = weights(learner)
    changed = {n for n in before if not torch.equal(before[n], after[n])}
    assert changed and changed <= trainable
    assert any("lora_B" in n for n in changed)  # B starts at 0: a real delta now exists

    ids = torch.tensor([[1, 504, 1115, 30, 2]])
    out = learner.export_hf(tmp_path / "merged")
    merged = AutoModelForCausalLM.from_pretrained(out)
    assert not any("lora" in n for n, _ in merged.named_parameters())
    with torch.no_grad():
        assert torch.allclose(merged(ids).logits, learner.model(ids).logits, atol=1e-5)
    assert learner.policy().generate([PROMPT_A], SamplingParams(max_new_tokens=3))

    saved = learner.save_checkpoint(tmp_path / "ckpt")
    assert sum(f.stat().st_size for f in saved.iterdir()) < 1_000_000  # adapters, not the base
    resumed = Learner(tiny_model_dir, config)
    resumed.load_checkpoint(saved)
    assert all(torch.equal(after[n], p) for n, p in resumed.model.named_parameters())
    with pytest.raises(ValueError, match="lora"):
        Learner(tiny_model_dir, UpdateConfig()).load_checkpoint(saved)


def test_bfloat16_compute_with_checkpointing_keeps_float32_weights(tiny_model_dir: Path) -> None:
    config = UpdateConfig(lr=1e-3, dtype="bfloat16", device="cpu", gradient_checkpointing=True)
    learner = Learner(tiny_model_dir, config)
    metrics = learner.update([GOOD, BAD])
    assert all(p.dtype == torch.float32 for p in learner.model.parameters())
    assert metrics.optimizer_steps == 1 and np.isfinite(metrics.loss)
    assert "autocast bfloat16" in str(learner.policy().describe().dtype)


def test_a_bf16_lora_learner_syncs_its_small_deltas(tiny_model_dir: Path, tmp_path: Path) -> None:
    """With the base held in bf16, the weights an engine is synced with keep a LoRA delta far
    below bf16's resolution (cast back to bf16, it would round away to the base weight)."""
    config = UpdateConfig(lr=1e-3, dtype="bfloat16", device="cpu", lora=True, lora_r=4,
                          lora_alpha=8)  # fmt: skip
    learner = Learner(tiny_model_dir, config)
    with torch.no_grad():
        for name, param in learner.model.named_parameters():
            if "lora_B" in name:
                param.fill_(1e-5)
    weights = dict(learner.named_weights())
    name = "model.layers.0.mlp.down_proj.weight"
    module = learner.model.get_base_model().model.layers[0].mlp.down_proj
    base = module.get_base_layer().weight.float()
    delta = module.get_delta_weight("default").float()
    assert delta.abs().max() < 1e-3 * base.abs().max()  # far below bf16's step at that size
    assert weights[name].dtype == torch.float32
    assert torch.allclose(weights[name] - base, delta, atol=1e-7)
    assert not torch.equal(weights[name], base)
    exported = learner.export_hf(tmp_path / "hf")  # what spade-eval loads: float32 throughout
    assert json.loads((exported / "config.json").read_text())["dtype"] == "float32"
    loaded = AutoModelForCausalLM.from_pretrained(exported, dtype="auto")
    assert torch.equal(loaded.state_dict()[name], weights[name])


def test_config_names_bad_fields() -> None:
    with pytest.raises(ValueError, match="unknown UpdateConfig field.*learning_rate"):
        UpdateConfig.from_dict({"learning_rate": 1e-6})
    with pytest.raises(ValueError, match="epsilon"):
        UpdateConfig(epsilon=-0.1)
    assert UpdateConfig.from_dict({"lora": True, "lora_target_modules": ["q_proj"]}).lora
