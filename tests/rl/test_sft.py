"""The warm start on TRL's SFTTrainer, on the tiny real Llama: the loss falls, only the
assistant's tokens are learned, a run resumes, and the output is a model dir spade loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import AutoModelForCausalLM

from spade.models import load_policy
from spade.models.policy import SamplingParams
from spade.rl.sft import SftConfig, SftExample, build_trainer, train_sft
from spade.selfplay.warmup.tokens import ExampleTokens

EPISODE = [
    {"role": "system", "content": "Play. Answer with \\boxed{N}."},
    {"role": "user", "content": "Guess a number from 1 to 100."},
    {"role": "assistant", "content": "\\boxed{50}"},
    {"role": "user", "content": "Lower."},
    {"role": "assistant", "content": "\\boxed{25}"},
]


def nll(model_dir: Path, example: SftExample) -> tuple[float, float]:
    """Mean negative log-likelihood of the learned tokens and of the context tokens."""
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    ids = torch.tensor([example.input_ids])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids).logits[0, :-1].float(), dim=-1)
    token = logp.gather(1, ids[0, 1:, None]).squeeze(1)
    mask = torch.tensor(example.loss_mask[1:], dtype=torch.bool)
    return float(-token[mask].mean()), float(-token[~mask].mean())


def test_masks_mark_exactly_the_replies_and_their_end_of_turn(smollm2_tokenizer: Any) -> None:
    tokens = ExampleTokens(smollm2_tokenizer)
    example = tokens.conversation(EPISODE, "test")
    learned = [t for t, m in zip(example.input_ids, example.loss_mask, strict=True) if m]
    assert smollm2_tokenizer.decode(learned) == "\\boxed{50}<|im_end|>\\boxed{25}<|im_end|>"
    # The whole sequence is the chat as the template renders it (token-in delta = render).
    text = smollm2_tokenizer.apply_chat_template(EPISODE, tokenize=False)
    assert smollm2_tokenizer.decode(example.input_ids) == text.removesuffix("\n")


def test_last_only_learns_the_last_reply_on_the_prompt_a_chat_request_renders(
    smollm2_tokenizer: Any,
) -> None:
    """A repair example: the failed reply is part of the prompt, rendered as the loop's chat
    request renders it, and only the corrected reply is learned."""
    example = ExampleTokens(smollm2_tokenizer).conversation(EPISODE, "repair", last_only=True)
    learned = [t for t, m in zip(example.input_ids, example.loss_mask, strict=True) if m]
    assert smollm2_tokenizer.decode(learned) == "\\boxed{25}<|im_end|>"
    prompt = smollm2_tokenizer.apply_chat_template(EPISODE[:-1], tokenize=False,
                                                   add_generation_prompt=True)  # fmt: skip
    context = example.input_ids[: example.loss_mask.index(1)]
    assert smollm2_tokenizer.decode(context) == prompt


def test_warm_start_learns_the_replies_only_and_exports_a_loadable_model(
    tiny_model_dir: Path, smollm2_tokenizer: Any, tmp_path: Path
) -> None:
    example = ExampleTokens(smollm2_tokenizer).conversation(EPISODE, "test")
    # bf16 autocast (what `precision: auto` picks on a CPU with AVX512-BF16) still learns.
    config = SftConfig(epochs=30, lr=3e-3, batch_size=2, grad_accum=1, save_steps=10,
                       logging_steps=5, precision="bf16")  # fmt: skip
    # TRL's labels: the token where the mask is 1, -100 (no loss) everywhere else.
    trainer, _, _ = build_trainer(tiny_model_dir, [example], config, tmp_path / "probe")
    labels = trainer.train_dataset[0]["labels"]
    assert labels == [t if m else -100 for t, m in zip(example.input_ids, example.loss_mask,
                                                        strict=True)]  # fmt: skip
    before = nll(tiny_model_dir, example)
    result = train_sft(tiny_model_dir, [example] * 2, config, tmp_path / "warm")
    after = nll(result.model_dir, example)
    assert after[0] < before[0] - 1.0  # the replies are learned
    losses = [loss for _, loss in result.losses]
    assert losses[-1] < losses[0]
    assert json.loads((result.model_dir / "spade-warmup.json").read_text())["examples"] == 2
    policy = load_policy(str(result.model_dir))  # what spade-eval --checkpoint DIR loads
    [reply] = policy.generate([EPISODE[:2]], SamplingParams(max_new_tokens=6))
    first_learned = example.input_ids[example.loss_mask.index(1)]
    assert reply.token_ids is not None and reply.token_ids[0] == first_learned
    # Resuming from the last checkpoint continues where it stopped (no step is redone).
    again = train_sft(tiny_model_dir, [example] * 2, config, tmp_path / "warm", resume=True)
    assert again.steps == result.steps


def test_bad_examples_are_refused() -> None:
    with pytest.raises(ValueError, match="no token to learn"):
        SftExample((1, 2), (0, 0), "empty")
    with pytest.raises(ValueError, match="2 ids but 1 mask"):
        SftExample((1, 2), (1,), "short")


@pytest.mark.parametrize(("precision", "bf16"), [("fp32", False), ("bf16", True)])
def test_precision_and_checkpointing_reach_the_trainer(
    tiny_model_dir: Path, smollm2_tokenizer: Any, tmp_path: Path, precision: str, bf16: bool
) -> None:
    example = ExampleTokens(smollm2_tokenizer).conversation(EPISODE, "test")
    config = SftConfig(precision=precision, gradient_checkpointing=not bf16)
    trainer, _, _ = build_trainer(tiny_model_dir, [example], config, tmp_path)
    assert trainer.args.bf16 is bf16 and trainer.args.gradient_checkpointing is not bf16
    assert trainer.accelerator.mixed_precision == ("bf16" if bf16 else "no")
    # Weights (and so the optimizer state) stay float32 under autocast.
    assert all(p.dtype == torch.float32 for p in trainer.model.parameters())


def test_auto_precision_is_bf16_only_where_it_is_native() -> None:
    from spade.rl.sft import native_bf16

    assert SftConfig().uses_bf16() is native_bf16()
    assert SftConfig(precision="fp32").uses_bf16() is False
    with pytest.raises(ValueError, match="warmup.precision must be one of auto, bf16, fp32"):
        SftConfig(precision="fp16")


def _batch(trainer: Any, examples: list[SftExample]) -> dict[str, torch.Tensor]:
    rows = [trainer.train_dataset[i] for i in range(len(examples))]
    return trainer._prepare_inputs(trainer.data_collator(rows))


def test_the_loss_is_the_mean_nll_of_the_learned_tokens_only(
    tiny_model_dir: Path, smollm2_tokenizer: Any, tmp_path: Path
) -> None:
    """The warm start's loss (which projects only the learned positions onto the vocabulary)
    is the mean negative log-likelihood of exactly the assistant tokens, padding included in
    the batch, as the full-logits computation gives it."""
    tokens = ExampleTokens(smollm2_tokenizer)
    examples = [tokens.conversation(EPISODE, "a"), tokens.conversation(EPISODE[:3], "b")]
    config = SftConfig(batch_size=2, grad_accum=1, precision="fp32")
    trainer, _, _ = build_trainer(tiny_model_dir, examples, config, tmp_path)
    batch = _batch(trainer, examples)
    assert batch["input_ids"].shape[0] == 2 and (batch["attention_mask"] == 0).any()  # padded
    with torch.no_grad():
        loss = float(trainer.compute_loss(trainer.model, dict(batch)))
        logits = trainer.model(input_ids=batch["input_ids"],
                               attention_mask=batch["attention_mask"]).logits  # fmt: skip
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    targets = batch["labels"][:, 1:]
    learned = targets != -100
    expected = -logp[learned].gather(1, targets[learned][:, None]).mean()
    learned_count = sum(sum(e.loss_mask[1:]) for e in examples)
    assert int(learned.sum()) == learned_count
    assert loss == pytest.approx(float(expected), rel=1e-5)


@pytest.mark.parametrize(
    ("precision", "dtype"), [("bf16", torch.bfloat16), ("fp32", torch.float32)]
)
def test_bf16_precision_computes_the_layers_in_bf16(
    tiny_model_dir: Path, smollm2_tokenizer: Any, tmp_path: Path, precision: str,
    dtype: torch.dtype,
) -> None:  # fmt: skip
    """`precision: bf16` must reach the matmuls: the layers' outputs are bf16 in a training
    step (weights stay float32). The loss calls the decoder itself, outside the autocast
    accelerate puts around `model.forward`: without one of its own it would train in float32
    while reporting bf16."""
    example = ExampleTokens(smollm2_tokenizer).conversation(EPISODE, "test")
    config = SftConfig(batch_size=1, grad_accum=1, precision=precision)
    trainer, _, _ = build_trainer(tiny_model_dir, [example], config, tmp_path)
    seen: list[torch.dtype] = []
    layer = trainer.model.get_decoder().layers[0].mlp.down_proj
    handle = layer.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    trainer.compute_loss(trainer.model, _batch(trainer, [example]))
    handle.remove()
    assert seen == [dtype]
    assert layer.weight.dtype == torch.float32
