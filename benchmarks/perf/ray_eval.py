"""Sharded evaluation on Ray vs one process: the per-sample overhead, and 2 workers vs 1.

Run: python benchmarks/perf/ray_eval.py [--samples 100] [--cpus 2] [--data-dir DIR] [--json]

Saved predictions, so no model time hides the path's own costs: `rg_math` (scoring is a
string comparison: what remains is the path's per-sample cost) and `humaneval` (each
sample's program and tests run in the sandbox: CPU work two workers can share). Each path
runs each benchmark on 1 sample and on N, each time in fresh processes (as one spade-eval
run would); the slope (T_N - T_1) / (N - 1) is the per-sample cost and T_1 the fixed cost
(for Ray: a local cluster's workers starting, importing spade and the runner, building their
state). Every figure is measured in this same run; on a machine whose cores are shared the
absolute numbers move a lot, the ratios less.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from tabulate import tabulate

from spade.distributed import Cluster, Workers, run_sharded
from spade.evals.run import planned_ids, resolve_benchmarks, run_benchmark, run_shard
from spade.host import this_host
from spade.rollout import Predictions
from spade.sandbox import SandboxConfig, configure

SANDBOX = SandboxConfig(backend="bwrap")
DEFAULT_DATA = Path(os.environ.get("SPADE_DATA_DIR") or Path(__file__).parents[3] / "shared/data")


def predictions(data_dir: Path, count: int) -> Predictions:
    (rg_math,), _ = resolve_benchmarks(["rg_math"], None)
    with gzip.open(data_dir / "humaneval" / "HumanEval.jsonl.gz", "rt") as rows:
        problems = [json.loads(line) for line, _ in zip(rows, range(count), strict=False)]
    saved: dict[str, dict[str, Any]] = {
        "humaneval": {p["task_id"]: "```python\n" + p["prompt"] + p["canonical_solution"] + "```"
                      for p in problems},
        "rg_math": {sample_id: f"<answer>{i}</answer>"
                    for i, sample_id in enumerate(planned_ids(rg_math, data_dir)[:count])},
    }  # fmt: skip
    return Predictions(saved)


def given(respond: Predictions) -> tuple[Predictions, dict[str, Any]]:
    return respond, {}


def timed_local(name: str, respond: Predictions, ids: list[str], data_dir: Path) -> float:
    """One process, started afresh: its caches are as cold as a new Ray worker's (a runner
    builds a benchmark's items on first use), so the two paths do the same work."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as fresh:
        return fresh.submit(_run_local, name, respond, ids, data_dir).result()


def _run_local(name: str, respond: Predictions, ids: list[str], data_dir: Path) -> float:
    configure(SANDBOX)
    (declaration,), _ = resolve_benchmarks([name], None)
    started = time.perf_counter()
    run_benchmark(declaration, respond, data_dir, ids)
    return time.perf_counter() - started


def timed_ray(cluster: Cluster, name: str, respond: Predictions, ids: list[str], data_dir: Path,
              workers: int) -> float:  # fmt: skip
    (declaration,), _ = resolve_benchmarks([name], None)
    work = partial(run_shard, {name: declaration}, data_dir)
    started = time.perf_counter()
    run_sharded(cluster, partial(given, respond), {name: ids}, work, Workers(workers))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(this_host(), file=sys.stderr if args.json else sys.stdout)
    configure(SANDBOX)
    respond = predictions(args.data_dir, args.samples)
    rows: list[list[str]] = []
    figures: dict[str, Any] = {}
    started = time.perf_counter()
    cluster = Cluster("local", num_cpus=args.cpus)
    figures["cluster_start_s"] = time.perf_counter() - started
    try:
        for name in ("rg_math", "humaneval"):
            ids = respond.ids(name)
            paths = {"one process": partial(timed_local, name, respond, data_dir=args.data_dir)}
            for workers in (1, 2):
                paths[f"ray, {workers} worker{'s' * (workers > 1)}"] = partial(
                    timed_ray, cluster, name, respond, data_dir=args.data_dir, workers=workers
                )
            for path, timed in paths.items():
                one, every = timed(ids=ids[:1]), timed(ids=ids)
                slope = (every - one) / (len(ids) - 1)
                figures[f"{name}/{path}"] = {
                    "fixed_s": one,
                    "total_s": every,
                    "per_sample_s": slope,
                }
                rows.append([name, path, f"{one:.2f}", f"{every:.2f}", f"{slope * 1000:.1f}"])
                print(f"{name:10} {path:16} T_1 {one:7.2f} s  T_{len(ids)} {every:7.2f} s",
                      file=sys.stderr, flush=True)  # fmt: skip
    finally:
        cluster.close()
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"local Ray cluster ({args.cpus} CPUs) started in {figures['cluster_start_s']:.1f} s; "
          f"N = {args.samples} samples per benchmark\n")  # fmt: skip
    print(tabulate(rows, headers=["benchmark", "path", "T_1 (s)", f"T_{args.samples} (s)",
                                  "per sample (ms)"], tablefmt="github"))  # fmt: skip
    for name in ("rg_math", "humaneval"):
        local = figures[f"{name}/one process"]
        one, two = figures[f"{name}/ray, 1 worker"], figures[f"{name}/ray, 2 workers"]
        overhead = (one["per_sample_s"] - local["per_sample_s"]) * 1000
        speedup = one["per_sample_s"] / max(two["per_sample_s"], 1e-9)
        total = one["total_s"] / two["total_s"]
        print(f"\n{name}: Ray per-sample overhead {overhead:+.1f} ms; 2 workers vs 1: "
              f"{speedup:.2f}x per sample, {total:.2f}x in total")  # fmt: skip


if __name__ == "__main__":
    main()
