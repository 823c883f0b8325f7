"""Supervised warm start on TRL's `SFTTrainer`: token sequences in, a HF model dir out.

The examples arrive tokenised (`SftExample`: ids and a mask of the tokens to learn), built
the way the RL rollouts build their sequences, so the warm start and the later policy
gradient see the same tokens for the same play. TRL turns the mask into labels (-100
elsewhere): only assistant tokens carry loss. Checkpoints go to `out/checkpoints` (resumable);
the result is exported as a plain HF dir (LoRA merged) that `spade-eval --checkpoint` and
`spade-train --set model=DIR` load.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from spade.models.builtin import BUILTIN_MODELS, builtin_model_dir

PRECISIONS = ("auto", "bf16", "fp32")


def native_bf16() -> bool:
    """Whether this machine's training device computes bf16 natively (not emulated)."""
    import torch

    if torch.cuda.is_available():
        return bool(torch.cuda.is_bf16_supported())
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:  # not Linux: do not guess
        return False
    return any(flag in flags.split() for flag in ("avx512_bf16", "amx_bf16"))


@dataclass(frozen=True)
class SftExample:
    """One training sequence: `input_ids`, and 1 in `loss_mask` where a token is learned."""

    input_ids: tuple[int, ...]
    loss_mask: tuple[int, ...]
    source: str = ""
    """What it teaches (e.g. `agent:HiddenNumberEnv:scripted:bisect`), for the data summary."""

    def __post_init__(self) -> None:
        if len(self.input_ids) != len(self.loss_mask):
            raise ValueError(f"{len(self.input_ids)} ids but {len(self.loss_mask)} mask entries")
        if not any(self.loss_mask):
            raise ValueError(f"example {self.source!r} has no token to learn")


@dataclass(frozen=True)
class SftConfig:
    """The warm start's optimisation; defaults fit smollm2-135m on a laptop CPU."""

    epochs: float = 2.0
    """Passes over the examples."""
    lr: float = 5e-5
    """AdamW learning rate (full fine-tune); LoRA takes ~10x more."""
    batch_size: int = 1
    """Sequences per micro-batch. One: no padding, so attention needs no mask and takes
    the CPU's fast causal kernel (1.36x the tokens/s of 4 padded sequences on 2 cores,
    benchmarks/perf/sft_speed.py)."""
    grad_accum: int = 8
    """Micro-batches per optimizer step."""
    max_length: int = 2048
    """Longer sequences are cut (from the right: the early turns of an episode are kept)."""
    warmup_ratio: float = 0.05
    weight_decay: float = 0.0
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    save_steps: int = 25
    """Optimizer steps between checkpoints (what `--resume` continues from)."""
    logging_steps: int = 5
    seed: int = 0
    precision: str = "auto"
    """Compute precision: `bf16` (autocast; weights and optimizer state stay float32), `fp32`,
    or `auto`: bf16 where the hardware computes it natively (a CUDA GPU with bf16, a CPU with
    AVX512-BF16 or AMX), else fp32. On the 2-core AVX512-BF16 CPU, bf16 trained 1.65x as many
    tokens/s as fp32 (benchmarks/perf/sft_speed.py)."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass (TRL's default): less memory, ~30% more
    compute. A 135M model fits without it."""

    def __post_init__(self) -> None:
        for name in ("epochs", "lr", "batch_size", "grad_accum", "max_length", "save_steps"):
            if not getattr(self, name) > 0:
                raise ValueError(f"warmup.{name} must be > 0, got {getattr(self, name)!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(
                f"warmup.precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}"
            )

    def uses_bf16(self) -> bool:
        """Whether training computes in bf16 on this machine."""
        if self.precision != "auto":
            return self.precision == "bf16"
        return native_bf16()


@dataclass(frozen=True)
class SftResult:
    model_dir: Path
    steps: int
    losses: list[tuple[int, float]]
    """(optimizer step, training loss) as logged."""


def train_sft(
    model: str | Path,
    examples: Sequence[SftExample],
    config: SftConfig,
    out: Path,
    resume: bool = False,
) -> SftResult:
    """Fine-tune `model` on `examples`; checkpoints in `out/checkpoints`, model in `out/model`."""
    trainer, tokenizer, count = build_trainer(model, examples, config, out)
    checkpoints = out / "checkpoints"
    resume_from = _last_checkpoint(checkpoints) if resume else None
    trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
    losses = [(int(r["step"]), float(r["loss"])) for r in trainer.state.log_history if "loss" in r]
    exported = _export(trainer.model, tokenizer, out / "model", config, count)
    return SftResult(exported, int(trainer.state.global_step), losses)


def build_trainer(
    model: str | Path,
    examples: Sequence[SftExample],
    config: SftConfig,
    out: Path,
    *,
    stock_loss: bool = False,
) -> tuple[Any, Any, int]:
    """TRL's SFTTrainer over the examples (labels: -100 wherever the mask is 0), its
    tokenizer, and the number of examples kept. `stock_loss`: TRL's own loss (its fused LM
    head over every position), the reference benchmarks/perf/sft_speed.py times against."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig as TrlConfig
    from trl import SFTTrainer

    model_dir = builtin_model_dir(str(model)) if str(model) in BUILTIN_MODELS else Path(model)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    rows = [
        {
            "input_ids": list(e.input_ids[: config.max_length]),
            "assistant_masks": list(e.loss_mask[: config.max_length]),
        }
        for e in examples
    ]
    rows = [r for r in rows if any(r["assistant_masks"])]
    if not rows:
        raise ValueError("no warm-start example has a token to learn within max_length")
    checkpoints = out / "checkpoints"
    args = TrlConfig(
        output_dir=str(checkpoints),
        num_train_epochs=config.epochs,
        learning_rate=config.lr,
        per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accum,
        warmup_steps=config.warmup_ratio,  # a float in [0, 1) is a share of all steps
        weight_decay=config.weight_decay,
        max_length=config.max_length,
        logging_steps=config.logging_steps,
        save_steps=config.save_steps,
        save_total_limit=2,
        seed=config.seed,
        report_to="none",
        use_cpu=not torch.cuda.is_available(),
        bf16=config.uses_bf16(),
        gradient_checkpointing=config.gradient_checkpointing,
        dataloader_num_workers=0,
        disable_tqdm=False,
        # Batches of similar lengths: episodes run 300-3000 tokens, and padding a batch to its
        # longest member would double the compute of a random mix.
        train_sampling_strategy="group_by_length",
    )
    peft_config = None
    if config.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=config.lora_r,
            lora_alpha=config.lora_alpha,
            target_modules="all-linear",
            task_type="CAUSAL_LM",
        )
    trainer_class = SFTTrainer if stock_loss else _learned_tokens_trainer(SFTTrainer)
    trainer = trainer_class(
        model=AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32),
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        peft_config=peft_config,
    )
    return trainer, tokenizer, len(rows)


def _learned_tokens_trainer(base: type) -> type:
    """`base` (TRL's SFTTrainer) with a loss that projects only the learned positions onto the
    vocabulary.

    Off Triton devices, TRL's fused LM head scores every position (it keeps tile shapes fixed
    for compilers), so on the CPU a designer example's ~850 prompt tokens pay the 49k-wide
    projection and log-softmax, forward and backward, for nothing: the stock trainer ran at
    0.53x this loss's tokens/s on the same batches (benchmarks/perf/sft_speed.py). The loss is
    TRL's (summed log-probabilities of the learned tokens over `num_items_in_batch`); the logged
    token accuracy is over the learned tokens, as TRL's is (TRL's entropy, a full-vocabulary
    exponential per learned token, is not logged: it cost 5% of a step)."""
    import torch

    class LearnedTokensSFTTrainer(base):  # type: ignore[misc, valid-type]
        def compute_loss(
            self,
            model: Any,
            inputs: dict[str, Any],
            return_outputs: bool = False,
            num_items_in_batch: Any = None,
        ) -> Any:
            causal = model.get_base_model() if hasattr(model, "get_base_model") else model
            body = {
                k: v
                for k, v in inputs.items()
                if k in ("input_ids", "attention_mask", "position_ids")
            }
            # Autocast here, not only around `model.forward` (where accelerate puts it): this
            # loss calls the decoder and the head itself.
            device = inputs["input_ids"].device.type
            with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=self.args.bf16):
                hidden = causal.get_decoder()(**body, use_cache=False).last_hidden_state[:, :-1]
                targets = inputs["labels"][:, 1:]
                learned = targets != -100
                logits = causal.get_output_embeddings()(hidden[learned]).float()
            logp = torch.log_softmax(logits, dim=-1)
            picked = logp.gather(1, targets[learned][:, None]).squeeze(1)
            count = learned.sum()
            denom = count.clamp(min=1) if num_items_in_batch is None else num_items_in_batch
            # A micro-batch with nothing to learn still returns a loss connected to the weights.
            loss = -picked.sum() / denom + 0.0 * hidden.sum()
            self._record(logp.detach(), targets[learned], int(count))
            return (loss, None) if return_outputs else loss

        def _record(self, logp: Any, targets: Any, count: int) -> None:
            if count == 0:
                return
            mode = "train" if self.model.training else "eval"
            hits = (logp.argmax(dim=-1) == targets).sum().item()
            self._metrics[mode]["mean_token_accuracy"].append(hits / count)

    return LearnedTokensSFTTrainer


def _last_checkpoint(root: Path) -> Path | None:
    found = sorted(root.glob("checkpoint-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    return found[-1] if found else None


def _export(model: Any, tokenizer: Any, target: Path, config: SftConfig, examples: int) -> Path:
    """A plain HF dir (LoRA merged), written next to `target` and renamed into place."""
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    note = {"warm_start": asdict(config), "examples": examples}
    (tmp / "spade-warmup.json").write_text(json.dumps(note, indent=2) + "\n")
    if target.exists():
        shutil.rmtree(target)
    tmp.rename(target)
    return target
