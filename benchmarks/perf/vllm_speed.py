"""vLLM (in process) against the transformers backend, side by side on three workloads.

Run: python benchmarks/perf/vllm_speed.py [--only a,b,c] [--model smollm2-135m]
     [--gsm8k-limit 16] [--gsm8k-tokens N] [--episodes 16] [--episode-tokens 48]
     [--turn-cap 10] [--train-set KEY=VALUE ...] [--json]

Generated tokens/s and wall time, measured in one run, of:
(a) a gsm8k 8-shot slice (--gsm8k-limit docs of the benchmark's seeded slice, greedy, the
    declaration's max_gen_toks or --gsm8k-tokens if lower), three arms behind the same
    rendered lm-eval task (benchmarks/perf/eval_vs_lm_eval.py): lm-eval's own HFLM, spade's
    transformers backend and spade's vLLM backend (`run_benchmark`, as `spade-eval` runs it,
    each spade arm behind a fresh, empty completion cache);
(b) multi-turn episodes of --suite (default the seed suite's train split): --episodes of its
    seeded slice, greedy, transformers and then vLLM on the same episodes at the training
    batch size (the learning run's spade.yaml, docs/lab-notebook.md: 16 conversations a call,
    up to 10 turns of 48 tokens). The suite benchmark plays each env up to its own max_turns
    at 192 tokens a turn;
    --episode-tokens sets the declaration's max_gen_toks, which the runner reads, and
    --turn-cap goes in each episode's spec through a subclass of the runner that overrides
    only `SuiteBenchmark._spec` (the runner takes no turn cap; `--turn-cap 0` runs it
    unchanged through `run_benchmark`);
(c) `spade-train` iterations (benchmarks/perf/train_iteration.py) of the default config plus
    TRAIN_SETS and any --train-set, with generation.backend live (the learner's transformers
    model) and then vllm (an in-process engine, weights pushed after the update), same config
    and seed otherwise. Figures are metrics.jsonl's time/total and time/rollout_generation +
    time/designer_generation; spade-train records no token counts, so (c)'s ratio is of
    seconds. Both arms sample (temperature > 0) from different generators, so their
    completions, and how much they generate, differ.

Tokens in (a) and (b) are the generated texts re-tokenised with the model's tokenizer,
counted alike for every arm; the ratio is tok/s against the transformers backend's
(for (c): its seconds over theirs). Loading is timed apart from the workloads: the
transformers model's load, lm-eval's HFLM load, vLLM's engine start (once, shared by (a) and
(b)), and for (c) each spade-train process's wall time outside its iterations (the vLLM
arm's excess over the live one: importing vLLM and starting its engine). "incl. start"
ratios charge each arm its whole load or start, as a separate run would pay it; the notes
say after how much work vLLM's extra start-up is paid back. vLLM runs float32 on a CPU, as
the transformers backend does, so greedy replies agree. (c) runs first, so that no model or
engine of this process holds memory while its spade-train processes run. Both speeds move
with the load on the cores: run it with nothing else on them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from eval_vs_lm_eval import (  # this folder (the script's own) is on sys.path
    count_tokens,
    lm_eval_direct,
    slice_ids,
    spade_measure,
    weights_dir,
)
from tabulate import tabulate
from train_iteration import read_metrics, run_training

from spade.evals.declarations import Declaration, declarations
from spade.evals.run import run_benchmark
from spade.evals.suite_runner import SuiteBenchmark, suite_declaration
from spade.host import this_host
from spade.models import Policy, load_policy
from spade.rollout import CompletionCache, EpisodeSpec, PolicyResponder
from spade.suites import SuiteEnv

TARGETS = {"a": 3.0, "b": 2.0, "c": 2.0}
"""The issue's targets: vLLM's speed over the transformers backend's."""
TRAIN_SETS = [
    # One small design round (2 completions), and the agent as the learning run's spade.yaml
    # played it: up to 10 turns of 48 tokens, 16 conversations a generate call.
    "designer.designs_per_iteration=1",
    "designer.max_gen_toks=256",
    "agent.turn_cap=10",
    "agent.max_gen_toks=48",
    "generation_batch_size=16",
]


@dataclass
class Row:
    workload: str
    """a, b or c: which target applies."""
    label: str
    backend: str
    seconds: float
    tokens: int | None
    """Generated tokens; None where the workload records none (spade-train)."""
    start_seconds: float | None
    """Model load or engine start, outside `seconds` (None: not a figure of this row's)."""
    reference: bool = False
    """The transformers backend's row: the ratios' denominator."""
    target: bool = False
    """The row the workload's target is about."""
    score: float | None = None

    @property
    def tokens_per_s(self) -> float | None:
        return self.tokens / self.seconds if self.tokens is not None and self.seconds else None

    def speed(self, with_start: bool) -> float | None:
        """Tokens (or, without token counts, runs) per second."""
        if with_start and self.start_seconds is None:
            return None
        seconds = self.seconds + ((self.start_seconds or 0.0) if with_start else 0.0)
        return (self.tokens if self.tokens is not None else 1) / seconds if seconds else math.nan


def progress(message: str) -> None:
    print(f"[vllm_speed {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def with_tokens(declaration: Declaration, max_gen_toks: int) -> Declaration:
    """The declaration with another token budget a turn (runners read it from `generation`)."""
    generation = declaration.generation.model_copy(update={"max_gen_toks": max_gen_toks})
    return declaration.model_copy(update={"generation": generation})


def timed_load(spec: str, batch_size: int) -> tuple[Policy, float]:
    started = time.perf_counter()
    policy = load_policy(spec, batch_size=batch_size)
    return policy, time.perf_counter() - started


def fresh_responder(policy: Policy, key: str, tmp: Path, batch_size: int) -> PolicyResponder:
    # A new, empty cache per arm and workload (as a first spade-eval run has): nothing is
    # served from an earlier arm's completions.
    cache = CompletionCache(Path(tempfile.mkdtemp(dir=tmp)) / "completions.sqlite")
    return PolicyResponder(policy, key, cache, batch_size)


# -- (a) gsm8k ------------------------------------------------------------------------------
def gsm8k_rows(args: argparse.Namespace, policies: dict[str, tuple[Policy, float]],
               weights: Path, tokenizer: Any, tmp: Path) -> list[Row]:  # fmt: skip
    declaration = declarations()["gsm8k"]
    budget = min(args.gsm8k_tokens or declaration.generation.max_gen_toks,
                 declaration.generation.max_gen_toks)  # fmt: skip
    declaration = with_tokens(declaration, budget)
    ids = slice_ids(declaration, args.data_dir, args.gsm8k_limit)
    label = f"gsm8k 8-shot, {len(ids)} docs, <= {budget} tok"
    progress(f"(a) {label}: lm-eval HFLM")
    hflm = lm_eval_direct(declaration, ids, args.data_dir, weights, args.gsm8k_batch_size,
                          tokenizer)  # fmt: skip
    rows = [Row("a", label, "lm-eval HFLM", hflm.seconds, hflm.tokens, hflm.load_seconds,
                score=hflm.score)]  # fmt: skip
    for backend, (policy, load) in policies.items():
        progress(f"(a) {label}: spade {backend}")
        respond = fresh_responder(policy, backend, tmp, args.gsm8k_batch_size)
        m = spade_measure(backend, declaration, ids, args.data_dir, respond, load, tokenizer)
        rows.append(Row("a", label, backend, m.seconds, m.tokens, load,
                        reference=backend == "transformers", target=backend == "vllm",
                        score=m.score))  # fmt: skip
    return rows


# -- (b) suite episodes ---------------------------------------------------------------------
class CappedSuite(SuiteBenchmark):
    """The suite benchmark with one turn cap for every episode (its own runner takes none)."""

    def __init__(self, declaration: Declaration, turn_cap: int) -> None:
        super().__init__(declaration)
        self.turn_cap = turn_cap

    def _spec(self, sample_id: str) -> tuple[EpisodeSpec, SuiteEnv]:
        spec, env = super()._spec(sample_id)
        return replace(spec, turn_cap=self.turn_cap), env


def play_episodes(declaration: Declaration, ids: list[str], respond: PolicyResponder,
                  turn_cap: int, tokenizer: Any) -> tuple[float, int, float]:  # fmt: skip
    """Seconds, generated tokens (the agent's replies, re-tokenised) and success rate."""
    started = time.perf_counter()
    if turn_cap:
        samples = CappedSuite(declaration, turn_cap).run(ids, respond, None)
    else:
        samples = run_benchmark(declaration, respond, None, ids).samples
    seconds = time.perf_counter() - started
    replies = [str(m["content"]) for s in samples for m in s.extra["transcript"]
               if m["role"] == "assistant"]  # fmt: skip
    success = sum(s.score for s in samples) / max(len(samples), 1)
    return seconds, count_tokens(tokenizer, replies), success


def episode_rows(args: argparse.Namespace, policies: dict[str, tuple[Policy, float]],
                 tokenizer: Any, tmp: Path) -> list[Row]:  # fmt: skip
    declaration = with_tokens(suite_declaration(args.suite), args.episode_tokens)
    ids = slice_ids(declaration, args.data_dir, args.episodes)
    turns = f"{args.turn_cap} turns" if args.turn_cap else "own max_turns"
    label = f"{args.suite}, {len(ids)} episodes, {turns} x {args.episode_tokens} tok"
    rows = []
    for backend, (policy, load) in policies.items():
        progress(f"(b) {label}: spade {backend}")
        respond = fresh_responder(policy, backend, tmp, args.episode_batch_size)
        seconds, tokens, success = play_episodes(declaration, ids, respond, args.turn_cap,
                                                 tokenizer)  # fmt: skip
        rows.append(Row("b", label, backend, seconds, tokens, load,
                        reference=backend == "transformers", target=backend == "vllm",
                        score=success))  # fmt: skip
    return rows


# -- (c) spade-train ------------------------------------------------------------------------
def train_arm(backend: str, args: argparse.Namespace) -> tuple[list[dict[str, Any]], float]:
    """metrics.jsonl rows of one spade-train run, and the process's wall time."""
    sets = [f"model={args.model}", *TRAIN_SETS, *args.train_set, f"generation.backend={backend}"]
    with tempfile.TemporaryDirectory(prefix="perf-vllm-train-") as tmp:
        started = time.perf_counter()
        # Its stdout goes to our stderr: ours carries the table (and --json) only.
        run_training(Path(tmp) / "run", args.train_iterations, sets, stdout=sys.stderr)
        wall = time.perf_counter() - started
        return read_metrics(Path(tmp) / "run"), wall


def train_rows(args: argparse.Namespace) -> list[Row]:
    label = f"spade-train, {args.train_iterations} iteration(s)"
    iteration: list[Row] = []
    generation_rows: list[Row] = []
    for backend, name in (("live", "transformers (live)"), ("vllm", "vllm")):
        progress(f"(c) {label}: generation.backend {backend}")
        metrics, wall = train_arm(backend, args)
        total = sum(float(r.get("time/total", 0.0)) for r in metrics)
        generation = sum(
            float(r.get("time/rollout_generation", 0.0))
            + float(r.get("time/designer_generation", 0.0))
            for r in metrics
        )
        # Outside the iterations: start-up (imports, the learner's load, vLLM's engine) and exit.
        outside = wall - total
        live = backend == "live"
        iteration.append(Row("c", f"{label}: time/total", name, total, None, outside,
                             reference=live, target=not live))  # fmt: skip
        generation_rows.append(Row("c", f"{label}: generation (rollout + designer)", name,
                                   generation, None, None, reference=live))  # fmt: skip
    return iteration + generation_rows


# -- report ---------------------------------------------------------------------------------
def quotient(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a / b if b else math.nan


def ratios(rows: list[Row]) -> list[dict[str, Any]]:
    """Each row as a dict, with its speed over the reference row of its workload and label."""
    refs = {(r.workload, r.label): r for r in rows if r.reference}
    out = []
    for row in rows:
        ref = refs.get((row.workload, row.label))
        ratio = quotient(row.speed(False), ref.speed(False)) if ref else None
        ratio_start = quotient(row.speed(True), ref.speed(True)) if ref else None
        target = TARGETS[row.workload] if row.target else None
        out.append(asdict(row) | {"tokens_per_s": row.tokens_per_s, "ratio": ratio,
                                  "ratio_incl_start": ratio_start, "target": target})  # fmt: skip
    return out


def table(results: list[dict[str, Any]]) -> str:
    def x(value: float | None) -> str:
        return "" if value is None else f"{value:.2f}x"

    body = []
    for r in results:
        target = r["target"]
        met = "" if target is None else " / ".join(
            "yes" if (ratio or 0) >= target else "no"
            for ratio in (r["ratio"], r["ratio_incl_start"]))  # fmt: skip
        body.append([f"{r['workload']}: {r['label']}", r["backend"], f"{r['seconds']:.1f}",
                     "n/a" if r["tokens"] is None else r["tokens"],
                     "n/a" if r["tokens_per_s"] is None else f"{r['tokens_per_s']:.1f}",
                     x(r["ratio"]), "" if r["start_seconds"] is None else
                     f"{r['start_seconds']:.1f}", x(r["ratio_incl_start"]),
                     "" if target is None else f">= {target:g}x", met])  # fmt: skip
    headers = ["workload", "backend", "wall s", "generated tokens", "tok/s",
               "ratio vs transformers", "load/start s", "ratio incl. start", "target",
               "met (excl. / incl. start)"]  # fmt: skip
    return tabulate(body, headers=headers, tablefmt="github")


def payback_notes(results: list[dict[str, Any]]) -> list[str]:
    """After how much transformers-backend work vLLM's extra start-up is paid back."""
    refs = {(r["workload"], r["label"]): r for r in results if r["reference"]}
    notes = []
    for r in results:
        ref = refs.get((r["workload"], r["label"]))
        if r["target"] is None or ref is None or not r["ratio"]:
            continue
        extra = r["start_seconds"] - ref["start_seconds"]
        where = f"{r['workload']}: {r['label']}"
        if extra <= 0:
            notes.append(f"{where}: vLLM's start costs no more than the transformers backend's")
            continue
        if r["ratio"] <= 1:
            notes.append(f"{where}: vLLM is not faster here, so its {extra:.1f} s of extra "
                         "start-up is never paid back")  # fmt: skip
            continue
        # Each transformers-second of work takes 1/ratio s on vLLM: it saves 1 - 1/ratio.
        payback = extra / (1 - 1 / r["ratio"])
        notes.append(f"{where}: vLLM's start costs {extra:.1f} s more than the transformers "
                     f"backend's; it is paid back after {payback:.0f} s of transformers-backend "
                     f"work ({payback / ref['seconds']:.1f} times this run's)")  # fmt: skip
    return notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="a,b,c", help="workloads to run: any of a,b,c")
    parser.add_argument("--model", default="smollm2-135m", help="alias or HF model dir")
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--gsm8k-limit", type=int, default=16, help="(a): docs in the slice")
    parser.add_argument("--gsm8k-tokens", type=int, help="(a): cap on the declaration's 512")
    parser.add_argument("--gsm8k-batch-size", type=int, default=8, help="(a): spade-eval's")
    parser.add_argument("--suite", default="suite:spade-seed@1.1.0:train", help="(b)")
    parser.add_argument("--episodes", type=int, default=16, help="(b): episodes in the slice")
    parser.add_argument("--episode-tokens", type=int, default=48, help="(b): tokens a turn")
    parser.add_argument("--turn-cap", type=int, default=10,
                        help="(b): turns an episode; 0: each env's own max_turns")  # fmt: skip
    parser.add_argument("--episode-batch-size", type=int, default=16,
                        help="(b): conversations a generate call (spade.yaml's)")  # fmt: skip
    parser.add_argument("--train-iterations", type=int, default=1, help="(c)")
    parser.add_argument("--train-set", action="append", default=[], metavar="KEY=VALUE",
                        help="(c): spade-train --set, after TRAIN_SETS")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    args = parser.parse_args()
    # vLLM logs to stdout unless told otherwise (here and in spade-train's processes): ours
    # carries the table and --json only.
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    print(this_host(), file=sys.stderr if args.json else sys.stdout)
    only = set(args.only.split(","))
    if not only or only - set(TARGETS):
        parser.error(f"--only {args.only!r}: expected a comma-separated subset of a,b,c")

    rows: dict[str, list[Row]] = {}
    if "c" in only:  # first: no model or engine of this process is loaded yet
        rows["c"] = train_rows(args)
    engine_start = None
    if only & {"a", "b"}:
        from transformers import AutoTokenizer

        weights = weights_dir(args.model)
        tokenizer = AutoTokenizer.from_pretrained(weights)
        # One policy per backend for (a) and (b): the responders batch (each workload at its
        # batch size), the backends need room for the larger batch only.
        batch = max(args.gsm8k_batch_size if "a" in only else 1,
                    args.episode_batch_size if "b" in only else 1)  # fmt: skip
        progress("loading the transformers backend")
        policies = {"transformers": timed_load(args.model, batch)}
        progress("starting vLLM's engine")
        policies["vllm"] = timed_load(f"vllm:{args.model}", batch)
        engine_start = policies["vllm"][1]
        progress(f"vLLM's engine started in {engine_start:.1f} s")
        with tempfile.TemporaryDirectory(prefix="perf-vllm-cache-") as tmp:
            if "a" in only:
                rows["a"] = gsm8k_rows(args, policies, weights, tokenizer, Path(tmp))
            if "b" in only:
                rows["b"] = episode_rows(args, policies, tokenizer, Path(tmp))

    results = ratios([row for workload in sorted(rows) for row in rows[workload]])
    print(f"{args.model}; (a) and (b) greedy; load/start s is outside wall s; ratio: tok/s "
          "over the transformers backend's ((c): its seconds over these)")  # fmt: skip
    print(table(results))
    for note in payback_notes(results):
        print(note)
    if engine_start is not None:
        print(f"vLLM's engine started once, in {engine_start:.1f} s, for (a) and (b) together; "
              "each incl.-start ratio charges all of it")  # fmt: skip
    if args.json:
        settings = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
        print(json.dumps({"settings": settings | {"train_sets": TRAIN_SETS},
                          "vllm_engine_start_s": engine_start, "rows": results}))  # fmt: skip


if __name__ == "__main__":  # vLLM's engine core may run in a spawned process that imports this
    main()
