"""spade-experiment: run a pre-registered experiment plan unit by unit, and write its verdict.

spade-experiment run experiments/NAME/plan.yaml [--only ARM/SEED ...]   run what is not done
spade-experiment status experiments/NAME/plan.yaml [--only UNIT ...]   done and missing units,
                                                                       with time estimates
spade-experiment verdict experiments/NAME [--out DIR]                  verdict.md and figures

Every (arm, seed) training run and every evaluation is a unit: a unit whose committed
artifacts are intact is skipped, one cut off is resumed, and one whose recorded config
disagrees with the plan stops the run with one line naming both.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from spade.cli.errors import UsageError, one_line_errors

if TYPE_CHECKING:
    from spade.experiments import Experiment
    from spade.experiments.runner import RunReport


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spade-experiment",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the units that are not done")
    run.add_argument("plan", type=Path, help="experiments/NAME/plan.yaml")
    run.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="UNIT",
        help="a unit or a prefix of units (e.g. fixed/seed0), repeatable",
    )
    run.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run units as tasks on this Ray cluster (local, auto or HOST:PORT), "
        "independent (arm, seed) units at the same time",
    )
    run.add_argument(
        "--unit-cpus",
        type=float,
        default=2.0,
        help="CPUs a unit takes on the Ray cluster (default 2)",
    )
    run.add_argument("--no-verdict", action="store_true", help="do not rewrite the verdict")
    status = commands.add_parser(
        "status", help="list done and missing units, and what the missing ones will take"
    )
    status.add_argument("plan", type=Path)
    status.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="UNIT",
        help="estimate only these missing units (as run --only), e.g. to fit a session",
    )
    verdict = commands.add_parser("verdict", help="write verdict.md and the figures")
    verdict.add_argument("dir", type=Path, help="experiments/NAME")
    verdict.add_argument("--out", type=Path, help="where to write (default: DIR)")
    return parser


@one_line_errors("spade-experiment")
def main(argv: list[str] | None = None) -> int:
    from spade.experiments import Experiment, ExperimentError, PlanError, Runner
    from spade.experiments.artifacts import ArtifactError
    from spade.experiments.write import write_verdict
    from spade.selfplay.config import ConfigError

    args = build_parser().parse_args(argv)
    try:
        if args.command == "verdict":
            if not (args.dir / "plan.yaml").is_file():
                raise UsageError(f"{args.dir}: no plan.yaml (not an experiment folder)")
            for path in write_verdict(args.dir, args.out):
                print(path)
            return 0
        if args.command == "status":
            Runner(args.plan)  # the plan validates
            return _status(Experiment.open(args.plan.parent), args.only)
        report = _run(args)
        print(f"ran {len(report.done)} units, {len(report.skipped)} already done")
        for name, seconds in report.seconds.items():
            print(f"  {name}: {seconds / 60:.1f} min")
        if not args.no_verdict:
            write_verdict(args.plan.parent)
        return 0
    except (PlanError, ExperimentError, ArtifactError, ConfigError) as exc:
        raise UsageError(str(exc)) from None


def _run(args: argparse.Namespace) -> RunReport:
    from spade.experiments import Runner

    if args.ray is None:
        return Runner(args.plan).run(args.only)
    from spade.distributed.errors import ClusterError
    from spade.experiments.ray_launcher import RayLauncher

    try:
        launcher = RayLauncher(args.ray, args.unit_cpus)
    except ClusterError as exc:
        raise UsageError(str(exc)) from None
    try:
        return Runner(args.plan, launcher=launcher).run(args.only, launcher.workers())
    finally:
        launcher.close()


def _status(experiment: Experiment, only: list[str]) -> int:
    from spade.experiments.budget import estimates, summary

    for unit in experiment.done():
        record = experiment.unit_record(unit) or {}
        seconds = record.get("seconds")
        wall = f"{seconds / 60:.1f} min" if isinstance(seconds, int | float) else ""
        print(f"done     {unit.name}  {wall}")
    found = estimates(experiment, only)
    for estimate in found:
        if estimate.seconds is None:
            guess = "(no peer has run)"
        else:
            guess = f"~{estimate.seconds / 60:.1f} min (median of {estimate.peers})"
        print(f"missing  {estimate.unit.name}  {guess}")
    print(summary(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
