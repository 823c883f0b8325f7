"""Sandboxed program runs: a forked child per program vs a fresh worker per program.

Run: python benchmarks/perf/program_throughput.py [--data-dir ../shared/data] [--json]

Measures (1) one trivial program (`x = 1`) end to end through a warm worker, which forks a
child per program, and through a fresh worker started (and killed) per program; and (2) all
164 HumanEval canonical solutions with their tests through `run_programs` (pool of workers,
one per core), and through a fresh worker per program on the same number of threads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tabulate import tabulate

from spade.evals.code_problems import load_humaneval
from spade.host import this_host
from spade.sandbox import SandboxConfig
from spade.sandbox.programs import ProgramRunner, default_parallelism, run_program, run_programs


def per_program_ms(fresh: bool, repeats: int, config: SandboxConfig) -> float:
    times = []
    with ProgramRunner(config) as runner:
        runner.run("x = 1")  # start the warm worker outside the timing
        for _ in range(repeats):
            started = time.perf_counter()
            result = run_program("x = 1", 10.0, config) if fresh else runner.run("x = 1")
            times.append(time.perf_counter() - started)
            assert result.passed, result
    return statistics.median(times) * 1000


def humaneval_seconds(data_dir: Path, fresh: bool, config: SandboxConfig) -> tuple[float, int]:
    problems = load_humaneval(data_dir / "humaneval/HumanEval.jsonl.gz")
    programs = [p.program(p.reference) for p in problems]
    started = time.perf_counter()
    if fresh:
        with ThreadPoolExecutor(default_parallelism()) as pool:
            results = list(pool.map(lambda s: run_program(s, 10.0, config), programs))
    else:
        results = run_programs(programs, 10.0, config)
    return time.perf_counter() - started, sum(r.passed for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "data"
    )
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--backend", default="auto", help="auto, bwrap, docker or unsafe-process")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(this_host(), file=sys.stderr if args.json else sys.stdout)
    config = SandboxConfig(backend=args.backend)
    rows = []
    for label, fresh in (("fork per program (warm worker)", False),
                         ("fresh worker per program", True)):  # fmt: skip
        seconds, passed = humaneval_seconds(args.data_dir, fresh, config)
        rows.append({
            "mode": label,
            "trivial program, median ms": round(per_program_ms(fresh, args.repeats, config), 1),
            f"164 HumanEval canonical, s ({default_parallelism()} workers)": round(seconds, 2),
            "passed": passed,
        })  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(tabulate(rows, headers="keys", tablefmt="github"))


if __name__ == "__main__":
    main()
