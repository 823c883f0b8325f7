"""vLLM (CPU build) against the transformers backend: start time, speed, greedy agreement.

Run: python benchmarks/perf/vllm_agreement.py [--model smollm2-135m] [--tokens 64]
     [--dtype float32] [--serve]

On one batch of 8 chats, greedy, with logprobs: the transformers backend (float32, the
reference), then vLLM on the same weights, in this process (or through a managed `vllm
serve` with --serve). Prints the engine's start time, each backend's tokens/s, how many
replies are token-for-token identical, and the worst |logprob| gap over the tokens both
backends produced before any divergence. Run it with nothing else on the cores: both
speeds move with the load.
"""

from __future__ import annotations

import argparse
import time

from tabulate import tabulate

from spade.host import this_host
from spade.models import Completion, SamplingParams, TransformersPolicy, builtin_model_dir
from spade.models.vllm_backend import VLLMConfig, VLLMPolicy
from spade.models.vllm_server import ServeConfig, VLLMServer

CHATS = [
    "What is 2+3?",
    "Name three colours of the rainbow, and say which one is your favourite and why.",
    "Hi",
    "Write a Python function that reverses a string.",
    "What is the capital of France?",
    "Explain photosynthesis in one sentence.",
    "List the first five prime numbers.",
    "Tell me a joke about cats.",
]


def agreement(got: list[Completion], want: list[Completion]) -> tuple[int, float]:
    """Identical replies, and the worst logprob gap before the first differing token."""
    same, worst = 0, 0.0
    for a, b in zip(got, want, strict=True):
        ids_a, ids_b = a.token_ids or [], b.token_ids or []
        same += ids_a == ids_b
        shared = 0
        while shared < min(len(ids_a), len(ids_b)) and ids_a[shared] == ids_b[shared]:
            shared += 1
        pairs = zip((a.logprobs or [])[:shared], (b.logprobs or [])[:shared], strict=True)
        worst = max([worst, *(abs(x - y) for x, y in pairs)])
    return same, worst


def timed(policy: object, chats: list, sampling: SamplingParams) -> tuple[list[Completion], float]:
    start = time.perf_counter()
    out = policy.generate(chats, sampling)  # type: ignore[attr-defined]
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--dtype", default="float32", help="vLLM's dtype (transformers: float32)")
    parser.add_argument("--serve", action="store_true", help="through a managed vllm serve")
    args = parser.parse_args()
    print(this_host())
    model_dir = builtin_model_dir(args.model)
    chats = [[{"role": "user", "content": q}] for q in CHATS]
    sampling = SamplingParams(max_new_tokens=args.tokens, logprobs=True)
    reference = TransformersPolicy.from_pretrained(model_dir)
    want, hf_s = timed(reference, chats, sampling)
    config = VLLMConfig(dtype=args.dtype, max_model_len=2048)
    start = time.perf_counter()
    if args.serve:
        server = VLLMServer(model_dir, ServeConfig(engine=config))
        server.start()
        engine: object = server.policy()
    else:
        engine = VLLMPolicy(model_dir, config)
    start_s = time.perf_counter() - start
    timed(engine, chats[:1], SamplingParams(max_new_tokens=2))  # first-request warm-up
    got, vllm_s = timed(engine, chats, sampling)
    if args.serve:
        server.close()
    same, worst = agreement(got, want)
    tokens = sum(c.completion_tokens for c in got)
    hf_tokens = sum(c.completion_tokens for c in want)
    label = "vllm serve" if args.serve else "vllm (in process)"
    print(tabulate(
        [["transformers", "float32", "", f"{hf_tokens / hf_s:.1f}", "", ""],
         [label, args.dtype, f"{start_s:.1f}", f"{tokens / vllm_s:.1f}",
          f"{same}/{len(CHATS)}", f"{worst:.1e}"]],
        headers=["backend", "dtype", "start s", "tokens/s", "identical", "worst |dlogp|"],
        tablefmt="github",
    ))  # fmt: skip


if __name__ == "__main__":  # the server and vLLM's engine core may spawn processes
    main()
