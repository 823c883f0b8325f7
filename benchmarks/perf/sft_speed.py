"""Warm-start (SFT) training speed: spade's loss against TRL's, precision, micro-batch size.

Run: python benchmarks/perf/sft_speed.py [--model smollm2-135m] [--steps 3] [--lora]
     [--arms trl-bf16-b4,fp32-b4,bf16-b4,bf16-b1] [--json]

Times `spade.rl.sft.build_trainer`'s TRL SFTTrainer (full fine-tuning, as the warm starts in
configs/ladder/ run; `--lora`: LoRA r32) on the same designer warm-start examples (built by
`build_designer_data` from the default corpus, the loop's prompt shape: ~1,300 tokens each,
~450 of them learned), 4 sequences per optimizer step in every arm:
- `trl-bf16-b4`: the reference, TRL's own loss (its fused LM head, which off Triton devices
  projects every position onto the vocabulary), bf16, micro-batches of 4 padded sequences;
- `fp32-b4`, `bf16-b4`: spade's loss (only the learned positions reach the LM head), float32
  or bf16 autocast (weights and optimizer state float32), micro-batches of 4;
- `bf16-b1`: as `bf16-b4` with one sequence per micro-batch (4 accumulated): no padding, so
  attention needs no mask (what `SftConfig` defaults to).
Each arm runs `--steps` optimizer steps after one untimed step (allocation, oneDNN kernel
selection); the figure is sequence tokens (prompt and reply, padding excluded) per second.
Ratios are against `trl-bf16-b4` measured in the same run. Run it with nothing else on the
cores: every speed moves with the load.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from spade.host import this_host

ARMS: dict[str, dict[str, Any]] = {
    "trl-bf16-b4": {"stock_loss": True, "precision": "bf16", "batch": 4},
    "fp32-b4": {"precision": "fp32", "batch": 4},
    "bf16-b4": {"precision": "bf16", "batch": 4},
    "bf16-b1": {"precision": "bf16", "batch": 1},
}
REFERENCE = "trl-bf16-b4"
SEQUENCES_PER_STEP = 4


def examples(model_dir: Path, count: int) -> list[Any]:
    from transformers import AutoTokenizer

    from spade.corpus import CorpusOptions, open_corpus
    from spade.selfplay.warmup.designer_data import DesignerDataConfig, build_designer_data
    from spade.selfplay.warmup.tokens import ExampleTokens

    corpus = open_corpus(None, CorpusOptions(max_words=120))
    config = DesignerDataConfig(reference_counts=(1,), excerpt_chars=800)
    designs = build_designer_data(corpus, count, random.Random(0), config=config)
    tokens = ExampleTokens(AutoTokenizer.from_pretrained(model_dir))
    reply = "assistant"
    return [tokens.conversation([*d.messages, {"role": reply, "content": d.reply}], "designer")
            for d in designs]  # fmt: skip


def time_arm(model_dir: Path, data: list[Any], arm: str, steps: int, lora: bool) -> dict[str, Any]:
    from transformers import TrainerCallback

    from spade.rl.sft import SftConfig, build_trainer

    settings = dict(ARMS[arm])
    stock_loss = bool(settings.pop("stock_loss", False))
    batch = settings.pop("batch")
    config = SftConfig(epochs=1, lr=3e-4 if lora else 1e-4, batch_size=batch,
                       grad_accum=SEQUENCES_PER_STEP // batch, lora=lora, lora_r=32,
                       lora_alpha=64, save_steps=10_000, **settings)  # fmt: skip
    chosen = data[: SEQUENCES_PER_STEP * (steps + 1)]
    starts: list[float] = []

    class Clock(TrainerCallback):  # type: ignore[misc]
        def on_step_begin(self, *args: Any, **kwargs: Any) -> None:
            starts.append(time.perf_counter())

        def on_train_end(self, *args: Any, **kwargs: Any) -> None:
            starts.append(time.perf_counter())

    with TemporaryDirectory() as out:
        trainer, _, _ = build_trainer(model_dir, chosen, config, Path(out), stock_loss=stock_loss)
        trainer.add_callback(Clock())
        trainer.train()
    timed = chosen[SEQUENCES_PER_STEP:]  # the first step is the untimed warm-up
    seconds = starts[-1] - starts[1]
    tokens = sum(len(e.input_ids) for e in timed)
    return {"arm": arm, "steps": steps, "tokens": tokens, "seconds": round(seconds, 1),
            "tok_per_s": round(tokens / seconds, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--steps", type=int, default=3, help="timed optimizer steps per arm")
    parser.add_argument("--arms", default=",".join(ARMS), help=f"comma list of {list(ARMS)}")
    parser.add_argument("--lora", action="store_true", help="LoRA r32 instead of full fine-tuning")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args()
    print(this_host(), file=sys.stderr if args.json else sys.stdout)
    from spade.models.builtin import BUILTIN_MODELS, builtin_model_dir
    from spade.rl.sft import native_bf16

    arms = args.arms.split(",")
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        parser.error(f"unknown arm(s) {unknown}; choose from {list(ARMS)}")
    model = args.model
    model_dir = builtin_model_dir(model) if model in BUILTIN_MODELS else Path(model)
    data = examples(model_dir, SEQUENCES_PER_STEP * (args.steps + 1))
    rows = [time_arm(model_dir, data, arm, args.steps, args.lora) for arm in arms]
    base = next((r["tok_per_s"] for r in rows if r["arm"] == REFERENCE), None)
    weights = "LoRA r32" if args.lora else "full fine-tuning"
    print(
        f"\nSFT speed, {model}, {weights}, {SEQUENCES_PER_STEP} sequences a step "
        f"(native bf16 here: {native_bf16()})"
    )
    print(f"{'arm':<12} {'tokens':>7} {'seconds':>8} {'tok/s':>7} {'ratio':>6}")
    for row in rows:
        ratio = f"{row['tok_per_s'] / base:.2f}" if base else "-"
        print(f"{row['arm']:<12} {row['tokens']:>7} {row['seconds']:>8} "
              f"{row['tok_per_s']:>7} {ratio:>6}")  # fmt: skip
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
