"""What it costs the trainer to hand an update to the generation engine, per update.

Run: python benchmarks/perf/weight_sync.py [--model smollm2-135m] [--repeats 3]

For the trainer side of each `generation.weight_sync` (spade.rl.weight_sync), timed in
one process on the same model, after one real optimizer step so the weights are not the
base ones:
- lora_adapter: `Learner.save_adapter` (what a vLLM server then loads from disk);
- vllm / nccl: `Learner.named_weights` copied into a second model of the same architecture
  (the in-process engine's `load_weights`; NCCL streams the same tensors), full and LoRA;
- reference: `Learner.export_hf`, a full HF checkpoint on disk, which is what a sync by
  "restart the server on the new checkpoint" would write every update.
Prints seconds (median of --repeats), megabytes moved, and the ratio to the reference.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
from tabulate import tabulate
from transformers import AutoModelForCausalLM

from spade.models.chat_template import end_of_turn_id, render_prompt
from spade.rl import Learner, TrainingSample, UpdateConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        full = trained(args.model, lora=False)
        reference, ref_mb = timed(lambda: export(full, Path(tmp) / "export"), args.repeats)
        rows.append(["export_hf (reference: full checkpoint on disk)", reference, ref_mb])
        target = AutoModelForCausalLM.from_pretrained(full.model_dir)
        seconds, mb = timed(lambda: copy_into(full, target), args.repeats)
        rows.append(["named_weights -> load (vllm / nccl), full fine-tune", seconds, mb])
        lora = trained(args.model, lora=True)
        seconds, mb = timed(lambda: copy_into(lora, target), args.repeats)
        rows.append(["named_weights -> load (vllm / nccl), LoRA merged", seconds, mb])
        seconds, mb = timed(lambda: adapter(lora, Path(tmp) / "adapter"), args.repeats)
        rows.append(["save_adapter (server lora_adapter)", seconds, mb])
    table = [[name, f"{s:.3f}", f"{mb:.1f}", f"{reference / s:.1f}x"] for name, s, mb in rows]
    print(f"model {args.model}, CPU, {torch.get_num_threads()} torch threads, "
          f"median of {args.repeats}")  # fmt: skip
    print(tabulate(table, headers=["trainer side of a sync", "seconds", "MB", "vs reference"]))


def trained(model: str, lora: bool) -> Learner:
    """A learner after one real optimizer step (a one-sample update with advantage 1)."""
    learner = Learner(model, UpdateConfig(lr=1e-4, lora=lora, device="cpu", micro_batch_size=1))
    tok = learner.tokenizer
    prompt = render_prompt(tok, [{"role": "user", "content": "Say hello."}])
    prompt_ids = tok(prompt, add_special_tokens=False)["input_ids"]
    reply = [*tok("Hello there!", add_special_tokens=False)["input_ids"], end_of_turn_id(tok)]
    metrics = learner.update([TrainingSample(tuple(prompt_ids), tuple(reply), 1.0, "agent")])
    assert metrics.optimizer_steps == 1
    return learner


def export(learner: Learner, out: Path) -> float:
    learner.export_hf(out)
    return megabytes(out)


def adapter(learner: Learner, out: Path) -> float:
    learner.save_adapter(out)
    return megabytes(out)


def copy_into(learner: Learner, target: torch.nn.Module) -> float:
    params = target.state_dict()
    moved = 0
    with torch.no_grad():
        for name, tensor in learner.named_weights():
            params[name].copy_(tensor)
            moved += tensor.numel() * tensor.element_size()
    return moved / 1e6


def megabytes(directory: Path) -> float:
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file()) / 1e6


def timed(action: Callable[[], float], repeats: int) -> tuple[float, float]:
    seconds, size = [], 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        size = action()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), size


if __name__ == "__main__":
    main()
