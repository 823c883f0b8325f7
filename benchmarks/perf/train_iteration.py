"""Wall-time breakdown of spade-train iterations: where an iteration's time goes.

Run: python benchmarks/perf/train_iteration.py [--iterations 1] [--set KEY=VALUE ...]
     python benchmarks/perf/train_iteration.py --run-dir runs/spade   # an existing run

Without --run-dir it runs `spade-train` with the default config (plus any --set overrides)
for --iterations iterations in a temporary run directory. Either way it reads the run's
metrics.jsonl and prints, per iteration and in total, the seconds and share of: designer
generation, env validation (the `spade-suite check` checks in the sandbox, repairs
included), agent rollouts split into policy generation and env time (sandboxed worker start,
reset, step, close), the GRPO update and the checkpoint. The sandbox share (validation + env
time) is what the target "< 10% of an iteration" is about. Per iteration it also prints the
optimizer steps, the agent samples that carried gradient and the rollout-vs-learner logprob
mismatch.

With --variant KEY=VALUE (repeatable) it trains twice from the same seed, as configured and
with the variant's settings added, and prints each part's seconds as a ratio variant/baseline:
    python benchmarks/perf/train_iteration.py --variant generation.vllm.dtype=bfloat16
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
    ("  of the rollouts: refill rounds", "time/refill"),  # dynamic sampling; in both above
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


SUMMARY = ("designer/validity_rate", "envs/win_rate", "envs/regret", "agent/return",
           "agent/envs_with_signal", "agent/refill_envs", "agent/refill_envs_with_signal",
           "update/optimizer_steps", "update/agent/with_gradient",
           "update/mismatch/logprob_abs_diff_mean")  # fmt: skip


def trained(iterations: int, sets: list[str]) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="perf-train-") as tmp:
        run_training(Path(tmp) / "run", iterations, sets)
        return read_metrics(Path(tmp) / "run")


def report(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n## {title}")
    headers = ["part", *(f"it {r.get('step', i)} s" for i, r in enumerate(rows)), "total s",
               "share"]  # fmt: skip
    print(tabulate(breakdown(rows), headers=headers, tablefmt="github"))
    for row in rows:
        print(f"it {row.get('step')}: " + ", ".join(f"{k}={row.get(k)}" for k in SUMMARY))


def ratios(baseline: list[dict[str, Any]], variant: list[dict[str, Any]]) -> list[list[str]]:
    """Each part's total seconds, baseline and variant, and variant/baseline."""
    table = []
    for label, key in [*PARTS, ("iteration total", "time/total")]:
        old = sum(float(r.get(key, 0.0)) for r in baseline)
        new = sum(float(r.get(key, 0.0)) for r in variant)
        table.append([label, f"{old:.1f}", f"{new:.1f}", f"{new / old:.2f}" if old else "-"])
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, help="summarise this run instead of training")
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--variant", action="append", default=[], metavar="KEY=VALUE",
        help="also train with these settings added; print the time ratios",
    )  # fmt: skip
    args = parser.parse_args()
    if args.run_dir is not None and args.variant:
        parser.error("--variant trains: it cannot summarise an existing --run-dir")
    print(this_host())
    if args.run_dir is not None:
        report(str(args.run_dir), read_metrics(args.run_dir))
        return
    baseline = trained(args.iterations, args.set)
    report("baseline: " + (" ".join(args.set) or "the default config"), baseline)
    if not args.variant:
        return
    variant = trained(args.iterations, [*args.set, *args.variant])
    report("variant: " + " ".join(args.variant), variant)
    print("\n## variant / baseline, same machine, same run")
    print(tabulate(ratios(baseline, variant), headers=["part", "baseline s", "variant s", "ratio"],
                   tablefmt="github"))  # fmt: skip


if __name__ == "__main__":
    main()
