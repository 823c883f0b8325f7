"""Training rollouts on vLLM's CPU engine in float32 (the CPU default) against bfloat16.

Run: python benchmarks/perf/vllm_dtype.py [--model smollm2-135m] [--repeats 2] [--json]

`generation.vllm.dtype` picks the engine's dtype for a training run's rollouts; `auto` is
float32 on a CPU, so that greedy evaluation agrees with the transformers backend. A training
run does not need that agreement, only that the sampler's logprobs stay close to the
learner's (bf16 autocast over float32 weights), and a CPU with AVX-512 BF16 computes bf16
natively. Each arm is a fresh process that starts an in-process engine in its dtype and
samples one rollout-shaped batch the way a ladder iteration does: 32 distinct chats of a
~700-token observation, temperature 1.0 (unseeded: a per-request seed stops the CPU engine,
"CPU Generator does not use offset"), up to 64 tokens, with logprobs.
Then the learner (`spade.rl.Learner`, bf16 autocast, as the ladder recipes train) scores the
same completions, and the arm reports the mismatch the update would log: mean and max
|sampler - learner| logprob over the generated tokens. Arms alternate (float32, bfloat16,
...); figures are each arm's median and the ratio float32 / bfloat16 (above 1: bfloat16 is
faster). Run it with nothing else on the cores.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from _arms import alternate, in_child, report

if TYPE_CHECKING:
    from spade.models import Completion

ARMS = ("float32", "bfloat16")
CHATS = 32
WORDS_PER_CHAT = 450
NEW_TOKENS = 64
_WORDS = (__doc__ or "").split()


def conversations() -> list[list[dict[str, str]]]:
    """The same `CHATS` distinct chats in every arm (seeded)."""
    rng = random.Random(0)
    system = "Act in the environment. Answer with \\boxed{ACTION}."
    chats = []
    for i in range(CHATS):
        observation = f"Room {i}: " + " ".join(rng.choices(_WORDS, k=WORDS_PER_CHAT))
        chats.append(
            [{"role": "system", "content": system}, {"role": "user", "content": observation}]
        )
    return chats


def child(model: str, dtype: str) -> None:
    """One arm: sample the batch on an engine in `dtype`, score it with the learner."""
    from spade.models import SamplingParams, builtin_model_dir
    from spade.models.vllm_backend import VLLMConfig, VLLMPolicy

    model_dir = builtin_model_dir(model)
    began = time.perf_counter()
    policy = VLLMPolicy(model_dir, VLLMConfig(dtype=dtype, batch_size=CHATS))
    policy.generate([[{"role": "user", "content": "warm up"}]], SamplingParams(max_new_tokens=4))
    record: dict[str, object] = {"start_s": time.perf_counter() - began}
    chats = conversations()
    sampling = SamplingParams(max_new_tokens=NEW_TOKENS, temperature=1.0, logprobs=True)
    t0 = time.perf_counter()
    completions = policy.generate(chats, sampling)
    record["rollout_s"] = time.perf_counter() - t0
    record["tokens"] = sum(c.completion_tokens for c in completions)
    policy.close()
    record.update(mismatch(model_dir, completions))
    print(json.dumps(record), flush=True)


def mismatch(model_dir: Path, completions: list[Completion]) -> dict[str, float]:
    """Mean and max |sampler - learner| logprob over the generated tokens."""
    import torch

    from spade.rl import Learner
    from spade.rl.config import UpdateConfig
    from spade.rl.grpo import completion_logprobs
    from spade.rl.samples import TrainingSample, collate, fit_sample

    learner = Learner(model_dir, UpdateConfig(dtype="bfloat16"))
    gaps: list[float] = []
    for c in completions:
        if not c.token_ids or not c.logprobs or not c.prompt_token_ids:
            continue
        sample = TrainingSample(tuple(c.prompt_token_ids), tuple(c.token_ids), 1.0, "agent")
        batch = collate([fit_sample(sample, 4096)], learner.tokenizer.pad_token_id)
        with torch.no_grad(), learner._autocast():
            own = completion_logprobs(learner.model, batch, 1.0)[0][0].tolist()
        gaps += [abs(a - b) for a, b in zip(own, c.logprobs, strict=False)]
    return {"gap_mean": statistics.fmean(gaps), "gap_max": max(gaps), "gap_tokens": len(gaps)}


def run_arm(model: str, dtype: str) -> dict[str, object]:
    return in_child(__file__, ["--child", dtype, "--model", model])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", choices=ARMS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.model, args.child)
        return 0
    runs = alternate("vllm_dtype", ARMS, args.repeats, lambda arm: run_arm(args.model, arm))
    return report(summarise(runs), args.json, print_table)


def summarise(runs: dict[str, list[dict[str, object]]]) -> dict[str, object]:
    def median(arm: str, figure: str) -> float:
        return statistics.median(float(str(r[figure])) for r in runs[arm])

    rows = {
        figure: {arm: median(arm, figure) for arm in ARMS}
        for figure in ("start_s", "rollout_s", "tokens", "gap_mean", "gap_max")
    }
    for figure in ("start_s", "rollout_s"):
        rows[figure]["ratio"] = rows[figure]["float32"] / rows[figure]["bfloat16"]
    return {"rows": rows, "runs": {arm: len(r) for arm, r in runs.items()}}


def print_table(summary: dict[str, object]) -> None:
    print(summary["machine"])
    print(f"{'figure':<10}{'float32':>12}{'bfloat16':>12}{'ratio':>8}")
    rows = summary["rows"]
    assert isinstance(rows, dict)
    for figure, row in rows.items():
        ratio = f"{row['ratio']:>8.2f}" if "ratio" in row else ""
        print(f"{figure:<10}{row['float32']:>12.4g}{row['bfloat16']:>12.4g}{ratio}")
    print("gap: |sampler - learner (bf16 autocast)| logprob over the sampled tokens")


if __name__ == "__main__":
    sys.exit(main())
