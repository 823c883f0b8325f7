"""BFCL multi-turn scoring throughput: spade's `bfcl` runner vs bfcl-eval's checker directly.

Run: python benchmarks/perf/bfcl_scoring.py [--data-dir ../shared/data] [--repeats 3] [--json]
     [--sandbox auto|bwrap|docker|unsafe-process]

All 800 entries, the ground truth as predictions (every entry passes, so every turn is
executed and checked; failing entries stop at their first bad turn and are cheaper).
Measures, in entries per second (median of the repeats):
1. bfcl-eval directly: a fresh interpreter that loads the files and calls
   `multi_turn_checker` per entry, as bfcl-eval's own evaluation does (the baseline);
2. the runner: `BfclBenchmark.run` with a `Predictions`, i.e. what
   `spade-eval --predictions` does: checks, then the checker in the backend worker, which
   runs in the sandbox (`--sandbox`, default auto: bubblewrap, else docker), worker start
   included;
3. `backends.score` in this process: the same guard + checker + clean-up without the worker,
   to show what the sandboxed process boundary costs (or saves);
and the round trip of one executed step (`pwd()`) through the worker vs in-process, which
is what the inference loop pays per step on top of generation.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tabulate import tabulate

from spade.evals.bfcl import backends
from spade.evals.bfcl.executor import BackendSession, BackendWorker
from spade.evals.bfcl.runner import BfclBenchmark
from spade.evals.declarations import declarations
from spade.host import this_host
from spade.rollout import Predictions
from spade.sandbox import BACKEND_NAMES, SandboxConfig, backend_name, configure

BASELINE = textwrap.dedent("""
    import json, sys, time
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    folder = sys.argv[1]
    started = time.perf_counter()
    count = 0
    for category in ["base", "miss_func", "miss_param", "long_context"]:
        name = f"BFCL_v4_multi_turn_{category}.json"
        questions = [json.loads(line) for line in open(f"{folder}/{name}")]
        answers = [json.loads(line) for line in open(f"{folder}/possible_answer/{name}")]
        for entry, answer in zip(questions, answers):
            truth = answer["ground_truth"]
            result = multi_turn_checker([[t] if t else [] for t in truth], truth, entry,
                                        "multi_turn_" + category, "baseline")
            assert result["valid"], entry["id"]
            count += 1
    print(json.dumps({"entries": count, "seconds": time.perf_counter() - started}))
""")


def baseline_rate(folder: Path) -> float:
    done = subprocess.run([sys.executable, "-c", BASELINE, str(folder)], capture_output=True,
                          text=True, check=True)  # fmt: skip
    report = json.loads(done.stdout)
    return float(report["entries"] / report["seconds"])


def runner_rate(bench: BfclBenchmark, data_dir: Path | None) -> float:
    table = bench.entries(data_dir)
    outputs = {i: [[t] if t else [] for t in e.ground_truth] for i, e in table.items()}
    respond = Predictions({bench.declaration.name: outputs})
    started = time.perf_counter()
    results = bench.run(list(outputs), respond, data_dir)
    seconds = time.perf_counter() - started
    assert all(r.extra["valid"] for r in results)
    return len(results) / seconds


def in_process_rate(bench: BfclBenchmark, data_dir: Path | None) -> float:
    table = bench.entries(data_dir)
    started = time.perf_counter()
    for n, entry in enumerate(table.values()):
        output = [[t] if t else [] for t in entry.ground_truth]
        verdict = backends.score(f"perf{n}", entry.checker_entry(), output, entry.ground_truth)
        assert verdict["valid"], entry.id
    return len(table) / (time.perf_counter() - started)


def step_ms(bench: BfclBenchmark, data_dir: Path | None, repeats: int) -> tuple[float, float]:
    entry = next(e for e in bench.entries(data_dir).values()
                 if e.involved_classes == ["GorillaFileSystem"])  # fmt: skip
    with BackendWorker() as worker:
        session = BackendSession(worker, entry)
        session.execute(["pwd()"])  # instances built outside the timing
        worker_times = []
        for _ in range(repeats):
            started = time.perf_counter()
            session.execute(["pwd()"])
            worker_times.append(time.perf_counter() - started)
    local_times = []
    backends.execute("perfstep", entry.checker_entry(), False, ["pwd()"])
    for _ in range(repeats):
        started = time.perf_counter()
        backends.execute("perfstep", entry.checker_entry(), False, ["pwd()"])
        local_times.append(time.perf_counter() - started)
    backends.drop("perfstep")
    return statistics.median(worker_times) * 1000, statistics.median(local_times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="holds bfcl/ (default: the bfcl-eval wheel's)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sandbox", default="auto", choices=BACKEND_NAMES,
                        help="where the runner's backend worker runs")  # fmt: skip
    args = parser.parse_args()
    print(this_host(), file=sys.stderr if args.json else sys.stdout)
    configure(SandboxConfig(backend=args.sandbox))
    sandbox = backend_name()
    runner_label = f"spade bfcl runner (--predictions path, worker in {sandbox} sandbox)"
    bench = BfclBenchmark(declarations()["bfcl_v4_multi_turn"])
    folder = (args.data_dir / "bfcl") if args.data_dir else None
    if folder is None:
        from spade.evals.bfcl.data import wheel_data_dir

        folder = wheel_data_dir()
    bench.entries(args.data_dir)  # loading is not scoring
    measures = {
        "bfcl-eval multi_turn_checker, direct (fresh process)": lambda: baseline_rate(folder),
        runner_label: lambda: runner_rate(bench, args.data_dir),
        "spade backends.score in-process (no worker)": lambda: in_process_rate(
            bench, args.data_dir
        ),
    }
    rates: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(args.repeats):  # interleaved, so drifting machine load hits all alike
        for name, measure in measures.items():
            rates[name].append(measure())
    worker_ms, local_ms = step_ms(bench, args.data_dir, 200)
    if args.json:
        print(json.dumps({"sandbox": sandbox,
                          "entries_per_s": {k: statistics.median(v) for k, v in rates.items()},
                          "step_ms": {"worker": worker_ms, "in_process": local_ms}}))  # fmt: skip
        return
    base = statistics.median(rates["bfcl-eval multi_turn_checker, direct (fresh process)"])
    rows = [[name, f"{statistics.median(v):.0f}", f"{statistics.median(v) / base:.2f}x"]
            for name, v in rates.items()]  # fmt: skip
    print("BFCL v4 multi-turn, 800 entries, ground truth as predictions")
    print(tabulate(rows, headers=["scoring", "entries/s", "vs bfcl-eval"], tablefmt="github"))
    print(
        f"\none executed step (pwd()): {worker_ms:.3f} ms through the sandboxed worker, "
        f"{local_ms:.3f} ms in-process"
    )


if __name__ == "__main__":
    main()
