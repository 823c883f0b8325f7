"""spade-eval vs lm-eval run directly: cold generation speed and a fully cached re-run.

Run: python benchmarks/perf/eval_vs_lm_eval.py [--benchmark gsm8k] [--limit 8]
         [--data-dir ../shared/data] [--model smollm2-135m] [--batch-size 8] [--json]

Same model (the weights dir behind --model), same data (the benchmark's seeded slice of
--limit docs), same task YAML (the declaration's rendered lm-eval task: prompts, few-shot
turns, stop sequences, max_gen_toks) and greedy decoding on both sides; the only difference
is the model object handed to `lm_eval.simple_evaluate`:
1. lm-eval directly: its own `HFLM(pretrained=DIR, batch_size=B)` (the reference);
2. spade cold: `run_benchmark` with spade's TransformersPolicy behind a fresh, empty
   completion cache (what `spade-eval` does the first time);
3. spade cached: the same call again, every completion served from the cache.
Model loading is timed separately and left out of the generation figures. Tokens are the
generated outputs re-tokenised with the model's tokenizer, counted alike on both sides.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

from spade.evals.benchmark import build_benchmark
from spade.evals.declarations import Declaration, declarations
from spade.evals.lm_eval_tasks import catalog, parse_options, render_tasks
from spade.evals.run import choose_ids, run_benchmark
from spade.host import this_host
from spade.models import load_policy
from spade.rollout import CompletionCache, PolicyResponder, Responder


@dataclass
class Measure:
    name: str
    seconds: float
    tokens: int
    load_seconds: float
    score: float

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else float("nan")


def count_tokens(tokenizer: Any, texts: list[str]) -> int:
    return sum(len(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts)


def weights_dir(model: str) -> Path:
    """The weights dir behind --model: a built-in alias's (fetched on first use), or the dir."""
    from spade.models.builtin import BUILTIN_MODELS, ensure_builtin_model

    return ensure_builtin_model(model)[0] if model in BUILTIN_MODELS else Path(model)


def slice_ids(declaration: Declaration, data_dir: Path, limit: int) -> list[str]:
    """The benchmark's seeded slice of `limit` docs, as `spade-eval --limit` picks it."""
    bench = build_benchmark(declaration)
    return choose_ids(declaration, bench, bench.sample_ids(data_dir), None, limit)


def lm_eval_direct(declaration: Declaration, ids: list[str], data_dir: Path, model_dir: Path,
                   batch_size: int, tokenizer: Any) -> Measure:  # fmt: skip
    import lm_eval
    from lm_eval.models.huggingface import HFLM

    options = parse_options(declaration)
    started = time.perf_counter()
    model = HFLM(pretrained=str(model_dir), batch_size=batch_size, device="cpu", dtype="float32")
    load = time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix="perf-lm-eval-") as tmp:
        task_set = render_tasks(declaration, options, data_dir, Path(tmp))
        refs = {ref.sample_id: ref for ref in catalog(task_set, options)}
        by_task: dict[str, list[int]] = {}
        for sample_id in ids:
            by_task.setdefault(refs[sample_id].task, []).append(refs[sample_id].index)
        started = time.perf_counter()
        output = lm_eval.simple_evaluate(
            model=model, tasks=list(by_task), task_manager=task_set.task_manager(),
            samples={task: sorted(indices) for task, indices in by_task.items()},
            apply_chat_template=True, fewshot_as_multiturn=options.fewshot_as_multiturn,
            system_instruction=options.system_instruction, bootstrap_iters=0, log_samples=True,
        )  # fmt: skip
        seconds = time.perf_counter() - started
    assert output is not None
    metric, _, filt = declaration.primary.partition(",")
    logged = [e for entries in output["samples"].values() for e in entries]
    texts = [e["resps"][0][0] for e in logged if e["filter"] == filt]
    score = sum(float(e[metric]) for e in logged if e["filter"] == filt) / max(len(texts), 1)
    return Measure("lm-eval HFLM, direct", seconds, count_tokens(tokenizer, texts), load, score)


def spade_measure(label: str, declaration: Declaration, ids: list[str], data_dir: Path,
                  respond: Responder, load: float, tokenizer: Any) -> Measure:  # fmt: skip
    """One `run_benchmark` through `respond`, timed; tokens counted as `lm_eval_direct`'s."""
    started = time.perf_counter()
    run = run_benchmark(declaration, respond, data_dir, ids)
    seconds = time.perf_counter() - started
    texts = [sample.output for sample in run.samples]
    score = sum(sample.score for sample in run.samples) / max(len(run.samples), 1)
    return Measure(label, seconds, count_tokens(tokenizer, texts), load, score)


def spade_runs(declaration: Declaration, ids: list[str], data_dir: Path, spec: str,
               batch_size: int, tokenizer: Any) -> list[Measure]:  # fmt: skip
    started = time.perf_counter()
    policy = load_policy(spec, batch_size=batch_size)
    load = time.perf_counter() - started
    info = policy.describe()
    measures = []
    with tempfile.TemporaryDirectory(prefix="perf-cache-") as tmp:
        cache = CompletionCache(Path(tmp) / "completions.sqlite")
        for label in ("spade-eval, cold (empty cache)", "spade-eval, fully cached re-run"):
            respond = PolicyResponder(policy, info.weights_sha256 or spec, cache, batch_size)
            measures.append(spade_measure(label, declaration, ids, data_dir, respond, load,
                                          tokenizer))  # fmt: skip
    return measures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="gsm8k", help="a runner: lm_eval declaration")
    parser.add_argument("--limit", type=int, default=8, help="docs in the seeded slice")
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--model", default="smollm2-135m", help="alias or HF model dir")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(this_host(), file=sys.stderr if args.json else sys.stdout)

    from transformers import AutoTokenizer

    declaration = declarations()[args.benchmark]
    ids = slice_ids(declaration, args.data_dir, args.limit)
    weights = weights_dir(args.model)
    tokenizer = AutoTokenizer.from_pretrained(weights)
    measures = [lm_eval_direct(declaration, ids, args.data_dir, weights, args.batch_size,
                               tokenizer)]  # fmt: skip
    measures += spade_runs(declaration, ids, args.data_dir, args.model, args.batch_size,
                           tokenizer)  # fmt: skip
    if args.json:
        print(json.dumps([m.__dict__ | {"tokens_per_s": m.tokens_per_s} for m in measures]))
        return
    reference = measures[0].seconds
    rows = [[m.name, f"{m.seconds:.1f}", m.tokens, f"{m.tokens_per_s:.1f}",
             f"{reference / m.seconds:.2f}x", f"{m.load_seconds:.1f}", f"{m.score:.3f}"]
            for m in measures]  # fmt: skip
    print(f"{args.benchmark}: {len(ids)} docs, {args.model}, greedy, batch {args.batch_size}")
    print(tabulate(rows, headers=["run", "wall s", "gen tokens", "tok/s", "speed vs lm-eval",
                                  "load s", "score"], tablefmt="github"))  # fmt: skip


if __name__ == "__main__":
    main()
