"""The policy update's speed: one step scored in its own gradient pass against the previous path.

Run: python benchmarks/perf/update_speed.py [--samples 32] [--repeats 3] [--dtype bfloat16]

An update of one pass and one optimizer step (every ladder recipe's: `num_iterations: 1`, no
`grad_accum`) used to score every micro-batch in a no-grad pass before the gradient pass, only
to compare the learner's logprobs with the sampler's (`mismatch/*`) once the samples carried
the sampler's logprobs, which vLLM rollouts always do. No weight moves before the step, so the
gradient pass's own logprobs are the same numbers; `Learner.update` now reads them there.

Both arms run the same update of `--samples` agent samples shaped like a ladder iteration's
(a chat prompt of ~700 tokens, a 20-60 token reply, advantages +-1, sampler logprobs a little
off the learner's) on smollm2-135m, micro-batches of 2 as the ladder recipes:
- `scored-first`: the previous path, rebuilt: a no-grad scoring pass over the update's
  micro-batches (what `_score_before_update` ran), then the update;
- `in-pass`: the update as it is now.
The arms alternate, `--repeats` times each, after one untimed update (oneDNN kernel choice); lr
is 1e-9 so the weights stay put. Median seconds per update and the ratio. Run it with nothing
else on the cores: every speed moves with the load.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import replace
from typing import Any

from spade.host import this_host

WORDS = ["the", "door", "key", "north", "south", "lamp",
         "code", "lever", "crate", "wire", "valve", "gauge"]  # fmt: skip


def agent_samples(learner: Any, count: int, seed: int = 0) -> list[Any]:
    """`count` samples: a system prompt and a long observation, a short boxed reply."""
    import torch

    from spade.models.chat_template import end_of_turn_id, render_prompt
    from spade.rl.grpo import completion_logprobs
    from spade.rl.samples import TrainingSample, collate, fit_sample

    rng = random.Random(seed)
    tok = learner.tokenizer
    samples = []
    for i in range(count):
        observation = " ".join(rng.choice(WORDS) for _ in range(rng.randint(450, 650)))
        messages = [
            {"role": "system", "content": "Act in the environment. Answer with \\boxed{ACTION}."},
            {"role": "user", "content": observation},
        ]
        prompt = tok(render_prompt(tok, messages), add_special_tokens=False)["input_ids"]
        reply = " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 40)))
        completion = [*tok(f"\\boxed{{{reply}}}", add_special_tokens=False)["input_ids"]]
        completion.append(end_of_turn_id(tok))
        plain = TrainingSample(tuple(prompt), tuple(completion), (-1.0) ** i, "agent")
        batch = collate([fit_sample(plain, 2048)], tok.pad_token_id)
        with torch.no_grad():
            own = completion_logprobs(learner.model, batch, 1.0)[0][0].tolist()
        samples.append(replace(plain, sampled_logprobs=tuple(lp - 0.01 for lp in own)))
    return samples


def score_first(learner: Any, samples: list[Any]) -> None:
    """The no-grad pass the previous path ran before the update: grpo's own step plan and its
    own scorer (`_plan_steps`, `_score_before_update` with `old=True`), so the arm stays the
    previous path if the plan changes."""
    from collections import defaultdict

    from spade.rl.grpo import _count_samples, _plan_steps, _score_before_update
    from spade.rl.metrics import MismatchTally, RoleTally
    from spade.rl.samples import fit_sample

    config = learner.config
    fitted = [fit_sample(s, config.max_length) for s in samples]
    live = _count_samples(fitted, defaultdict(RoleTally), config.beta)
    device = next(learner.model.parameters()).device
    plan = _plan_steps(live, config, learner.tokenizer.pad_token_id, learner.step, device)
    # no-grad (its decorator); old=True, no reference model
    _score_before_update(
        learner.model, plan, config, True, None, learner._autocast, MismatchTally()
    )


def timed(learner: Any, samples: list[Any], arm: str) -> float:
    start = time.perf_counter()
    if arm == "scored-first":
        score_first(learner, samples)
    learner.update(samples)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    args = parser.parse_args(argv)

    from spade.models import builtin_model_dir
    from spade.rl import Learner
    from spade.rl.config import UpdateConfig

    config = UpdateConfig(lr=1e-9, micro_batch_size=2, dtype=args.dtype)
    learner = Learner(builtin_model_dir("smollm2-135m"), config)
    samples = agent_samples(learner, args.samples)
    tokens = sum(len(s.prompt_ids) + len(s.completion_ids) for s in samples)
    print(this_host())
    print(f"{args.samples} samples, {tokens} tokens, micro-batches of 2, {args.dtype}")
    learner.update(samples)  # untimed: kernel selection, allocation
    seconds: dict[str, list[float]] = {"scored-first": [], "in-pass": []}
    for _ in range(args.repeats):
        for arm in seconds:
            seconds[arm].append(timed(learner, samples, arm))
    before = statistics.median(seconds["scored-first"])
    for arm, values in seconds.items():
        median = statistics.median(values)
        runs = ", ".join(f"{v:.1f}" for v in values)
        print(f"{arm:>13}: {median:6.1f} s an update (runs: {runs}), {before / median:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
