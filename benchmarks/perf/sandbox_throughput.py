"""Sandbox speed: steps/s through a persistent worker vs in-process, start latency, check time.

Run: python benchmarks/perf/sandbox_throughput.py [--steps 20000] [--json]

Both processes are pinned to one core for the "one core" figures (the worker inherits the
caller's affinity), which is the issue's target setting; the unpinned figures show what
cross-core wake-ups cost on this machine. Every figure is measured in this same run, and the
sandboxed rate is also given as a ratio of the in-process rate, since machines are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from perf_envs import COUNTER_ENV, seconds_per_step  # this folder (the script's own) is on sys.path
from tabulate import tabulate

from spade.envs import RemoteEnv, validate_source
from spade.host import this_host
from spade.sandbox import SandboxConfig, SandboxWorker
from spade.sandbox.process import bwrap_works

SEED_ENV = Path(__file__).parents[2] / "envs_snapshots/spade-seed/1.0.0/envs/hidden_number.py"


def in_process_rate(steps: int) -> float:
    namespace: dict[str, object] = {}
    exec(COUNTER_ENV, namespace)
    env = namespace["CounterEnv"]()  # type: ignore[operator]
    env.reset(0)
    started = time.perf_counter()
    for _ in range(steps):
        env.step("x")
    return steps / (time.perf_counter() - started)


def sandboxed_rate(steps: int, backend: str) -> float:
    with RemoteEnv(COUNTER_ENV, config=SandboxConfig(backend=backend)) as env:  # type: ignore[arg-type]
        return 1.0 / seconds_per_step(env, steps, warmup=500)


def start_latency(backend: str, repeats: int = 20) -> float:
    times = []
    for _ in range(repeats):
        worker = SandboxWorker(SandboxConfig(backend=backend))  # type: ignore[arg-type]
        worker.start()
        times.append(worker.start_seconds)
        worker.close()
    return statistics.median(times)


def check_seconds(backend: str, repeats: int = 5) -> tuple[float, float]:
    """(library validate_source, whole `spade-suite check` CLI incl. interpreter start)."""
    source = SEED_ENV.read_text()
    config = SandboxConfig(backend=backend)  # type: ignore[arg-type]
    lib = statistics.median(validate_source(source, config=config).seconds for _ in range(repeats))
    cli = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "spade.cli.suite", "check", str(SEED_ENV), "--backend", backend],
            check=True,
            capture_output=True,
        )
        cli.append(time.perf_counter() - started)
    return lib, statistics.median(cli)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(this_host(), file=sys.stderr if args.json else sys.stdout)
    backends = (["bwrap"] if bwrap_works() else []) + ["unsafe-process"]
    all_cpus = os.sched_getaffinity(0)
    rows = []
    for backend in backends:
        os.sched_setaffinity(0, {min(all_cpus)})
        pinned = sandboxed_rate(args.steps, backend)
        reference = in_process_rate(args.steps * 10)
        os.sched_setaffinity(0, all_cpus)
        unpinned = sandboxed_rate(args.steps // 4, backend)
        lib, cli = check_seconds(backend)
        rows.append({
            "backend": backend,
            "in-process steps/s": round(reference),
            "sandboxed steps/s (1 core)": round(pinned),
            "ratio": round(pinned / reference, 4),
            f"sandboxed steps/s ({len(all_cpus)} cores)": round(unpinned),
            "worker start ms": round(start_latency(backend) * 1000, 1),
            "check s (library)": round(lib, 3),
            "check s (CLI)": round(cli, 3),
        })  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(tabulate(rows, headers="keys", tablefmt="github"))


if __name__ == "__main__":
    main()
