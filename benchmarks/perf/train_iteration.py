"""Wall-time breakdown of spade-train iterations: where an iteration's time goes.

Run: python benchmarks/perf/train_iteration.py [--iterations 1] [--set KEY=VALUE ...]
     python benchmarks/perf/train_iteration.py --run-dir runs/spade   # an existing run

Without --run-dir it runs `spade-train` with the default config (plus any --set overrides)
for --iterations iterations in a temporary run directory. Either way it reads the run's
metrics.jsonl and prints, per iteration and in total, the seconds and share of: designer
generation, env validation (the `spade-suite check` checks in the sandbox, repairs
included), agent rollouts split into policy generation and env time (sandboxed worker start,
reset, step, close), the GRPO update and the checkpoint. The sandbox share (validation + env
time) is what the target "< 10% of an iteration" is about.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from tabulate import tabulate

from spade.host import this_host

PARTS = [
    ("designer generation", "time/designer_generation"),
    ("env validation (sandbox)", "time/validation"),
    ("rollouts: policy generation", "time/rollout_generation"),
    ("rollouts: env time (sandbox)", "time/rollout_env"),
    ("GRPO update", "time/update"),
    ("weight sync to the generation engine", "time/weight_sync"),
    ("checkpoint", "time/checkpoint"),
]


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def breakdown(rows: list[dict[str, Any]]) -> list[list[Any]]:
    totals = [float(r.get("time/total", 0.0)) for r in rows]
    table = []
    for label, key in PARTS:
        values = [float(r.get(key, 0.0)) for r in rows]
        share = sum(values) / sum(totals) if sum(totals) else float("nan")
        table.append([label, *(f"{v:.1f}" for v in values), f"{sum(values):.1f}", f"{share:.1%}"])
    sandbox = [float(r.get("time/validation", 0.0)) + float(r.get("time/rollout_env", 0.0))
               for r in rows]  # fmt: skip
    table.append(["sandbox total", *(f"{v:.1f}" for v in sandbox), f"{sum(sandbox):.1f}",
                  f"{sum(sandbox) / sum(totals):.1%}"])  # fmt: skip
    table.append(["iteration total", *(f"{v:.1f}" for v in totals), f"{sum(totals):.1f}", "100%"])
    return table


def run_training(
    run_dir: Path, iterations: int, sets: list[str], stdout: IO[str] | None = None
) -> None:
    """`spade-train` for `iterations` in `run_dir`; `stdout`: where its stdout goes (ours)."""
    command = [sys.executable, "-m", "spade.cli.train", "--run-dir", str(run_dir),
               "--iterations", str(iterations), "--set", "freeze_at_end=false"]  # fmt: skip
    for item in sets:
        command += ["--set", item]
    subprocess.run(command, check=True, stdout=stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, help="summarise this run instead of training")
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    print(this_host())
    if args.run_dir is not None:
        rows = read_metrics(args.run_dir)
    else:
        with tempfile.TemporaryDirectory(prefix="perf-train-") as tmp:
            run_training(Path(tmp) / "run", args.iterations, args.set)
            rows = read_metrics(Path(tmp) / "run")
    headers = ["part", *(f"it {r.get('step', i)} s" for i, r in enumerate(rows)), "total s",
               "share"]  # fmt: skip
    print(tabulate(breakdown(rows), headers=headers, tablefmt="github"))
    keys = ("designer/validity_rate", "envs/win_rate", "envs/regret", "agent/return")
    for row in rows:
        print(f"it {row.get('step')}: " + ", ".join(f"{k}={row.get(k)}" for k in keys))


if __name__ == "__main__":
    main()
