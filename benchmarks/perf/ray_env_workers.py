"""Env workers on a Ray actor vs in this process's sandbox: what one step and one episode cost.

Run: python benchmarks/perf/ray_env_workers.py [--steps 2000] [--episodes 20] [--json]

A training episode's env calls go through `RayEnv` (one actor round trip, then the same pipe
to the sandboxed worker on the actor's node) instead of straight to a `RemoteEnv`; this
measures the difference on a local cluster: steps of a trivial env, and whole episodes (start
the worker, load the source, reset, play the solution, close) of a seed env.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from perf_envs import COUNTER_ENV, seconds_per_step  # this folder (the script's own) is on sys.path
from tabulate import tabulate

from spade.distributed import Cluster, EnvHosts
from spade.envs.remote import RemoteEnv
from spade.host import this_host
from spade.sandbox import SandboxConfig

SEED_ENV = Path(__file__).parents[2] / "envs_snapshots/spade-seed/1.1.0/envs/hidden_number.py"
SANDBOX = SandboxConfig(backend="bwrap")


def per_step(open_env: Callable[..., RemoteEnv], steps: int) -> float:
    env = open_env(COUNTER_ENV, config=SANDBOX)
    seconds = seconds_per_step(env, steps, warmup=50)
    env.close()
    return seconds


def per_episode(open_env: Callable[..., RemoteEnv], episodes: int) -> float:
    source = SEED_ENV.read_text()
    started = time.perf_counter()
    for seed in range(episodes):
        env = open_env(source, "hidden_number.py", config=SANDBOX)
        env.reset(seed)
        for action in env.solution():
            env.step(action)
        env.close()
    return (time.perf_counter() - started) / episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(this_host(), file=sys.stderr if args.json else sys.stdout)
    with Cluster("local", num_cpus=1) as cluster:
        hosts = EnvHosts(cluster, 1)
        try:
            figures = {
                "local_step_us": per_step(RemoteEnv, args.steps) * 1e6,
                "ray_step_us": per_step(hosts.open, args.steps) * 1e6,
                "local_episode_ms": per_episode(RemoteEnv, args.episodes) * 1e3,
                "ray_episode_ms": per_episode(hosts.open, args.episodes) * 1e3,
            }
        finally:
            hosts.close()
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    rows = [
        ["step (trivial env)", f"{figures['local_step_us']:.0f} us",
         f"{figures['ray_step_us']:.0f} us",
         f"{figures['ray_step_us'] - figures['local_step_us']:+.0f} us"],
        ["episode (hidden_number: start, reset, solution, close)",
         f"{figures['local_episode_ms']:.1f} ms", f"{figures['ray_episode_ms']:.1f} ms",
         f"{figures['ray_episode_ms'] - figures['local_episode_ms']:+.1f} ms"],
    ]  # fmt: skip
    print(tabulate(rows, headers=["", "this process", "Ray actor", "difference"],
                   tablefmt="github"))  # fmt: skip


if __name__ == "__main__":
    main()
