"""vLLM's CPU engine with and without tcmalloc preloaded, in the same run (spade/allocator.py).

Run: python benchmarks/perf/allocator.py [--model smollm2-135m] [--repeats 2] [--json]

Each arm is a fresh process (an allocator is chosen when a process starts) that starts an
in-process vLLM engine for --model as spade-eval does (`load_policy("vllm:...")`) and times
two workloads, greedy:
(a) prefill-heavy: 16 distinct prompts of ~900 tokens (a multi-turn context), 64 new tokens;
(b) decode-heavy: 32 distinct short prompts, 64 new tokens.
The prompts differ from their first token on, so prefix caching reuses nothing within an arm.
Arms alternate (plain, tcmalloc, plain, tcmalloc, ...) so drift in the machine's load falls on
both; the figures are each arm's median and the ratio plain / tcmalloc (above 1: tcmalloc is
faster). The run also checks that both arms produce the same completions, token for token:
the allocator must not change what is computed. Run it with nothing else on the cores.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

from _arms import alternate, in_child, report

from spade.allocator import DONE, tcmalloc_library

WORKLOADS = {"prefill": (16, 900), "decode": (32, 12)}
"""name -> (prompts, words of each prompt)."""
NEW_TOKENS = 64
_WORDS = (__doc__ or "").split()


def prompts(count: int, words: int) -> list[str]:
    """`count` distinct prompts of `words` words each (seeded: the same in every arm)."""
    rng = random.Random(0)
    return [
        f"Note {i}: " + " ".join(rng.choice(_WORDS) for _ in range(words)) + "\nSummarise:"
        for i in range(count)
    ]


def child(model: str) -> None:
    """One arm: start the engine, run both workloads, print a JSON line of times and texts."""
    from spade.models.load import load_policy
    from spade.models.policy import SamplingParams

    began = time.perf_counter()
    policy = load_policy(f"vllm:{model}", batch_size=32)
    policy.generate([[{"role": "user", "content": "warm up"}]], SamplingParams(max_new_tokens=4))
    record: dict[str, object] = {"start_s": time.perf_counter() - began}
    sampling = SamplingParams(max_new_tokens=NEW_TOKENS)
    for name, (count, words) in WORKLOADS.items():
        conversations = [[{"role": "user", "content": p}] for p in prompts(count, words)]
        t0 = time.perf_counter()
        completions = policy.generate(conversations, sampling)
        record[f"{name}_s"] = time.perf_counter() - t0
        record[f"{name}_texts"] = [c.text for c in completions]
    print(json.dumps(record), flush=True)


def run_arm(model: str, library: str | None) -> dict[str, object]:
    environment = dict(os.environ)
    environment.pop("LD_PRELOAD", None)
    if library is not None:
        environment["LD_PRELOAD"] = library
        environment[DONE] = "1"
    return in_child(__file__, ["--child", "--model", model], environment)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.model)
        return 0
    library = tcmalloc_library()
    if library is None:
        print("allocator.py: no tcmalloc library found (Debian: libtcmalloc-minimal4)")
        return 2
    preloads = {"plain": None, "tcmalloc": library}
    runs = alternate(
        "allocator", list(preloads), args.repeats, lambda arm: run_arm(args.model, preloads[arm])
    )
    return report(summarise(runs), args.json, print_table)


def summarise(runs: dict[str, list[dict[str, object]]]) -> dict[str, object]:
    rows = {}
    for figure in ("start_s", *(f"{name}_s" for name in WORKLOADS)):
        plain = statistics.median(float(str(r[figure])) for r in runs["plain"])
        fast = statistics.median(float(str(r[figure])) for r in runs["tcmalloc"])
        rows[figure] = {"plain": plain, "tcmalloc": fast, "ratio": plain / fast}
    texts = [[r[f"{name}_texts"] for name in WORKLOADS] for arm in runs.values() for r in arm]
    return {"rows": rows, "same_outputs": all(t == texts[0] for t in texts), "runs": len(texts)}


def print_table(summary: dict[str, object]) -> None:
    print(summary["machine"])
    print(f"{'figure':<12}{'plain s':>10}{'tcmalloc s':>12}{'ratio':>8}")
    rows = summary["rows"]
    assert isinstance(rows, dict)
    for figure, row in rows.items():
        print(f"{figure:<12}{row['plain']:>10.1f}{row['tcmalloc']:>12.1f}{row['ratio']:>8.2f}")
    print(f"same completions in all {summary['runs']} runs: {summary['same_outputs']}")


if __name__ == "__main__":
    sys.exit(main())
