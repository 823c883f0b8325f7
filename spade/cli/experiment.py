"""spade-experiment: run a pre-registered experiment plan unit by unit, and write its verdict.

spade-experiment run experiments/NAME/plan.yaml [--only ARM/SEED ...]   run what is not done
spade-experiment status experiments/NAME/plan.yaml                     done and missing units
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
    run.add_argument("--no-verdict", action="store_true", help="do not rewrite the verdict")
    status = commands.add_parser("status", help="list done and missing units")
    status.add_argument("plan", type=Path)
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
        runner = Runner(args.plan)
        if args.command == "status":
            return _status(Experiment.open(args.plan.parent))
        report = runner.run(args.only)
        print(f"ran {len(report.done)} units, {len(report.skipped)} already done")
        for name, seconds in report.seconds.items():
            print(f"  {name}: {seconds / 60:.1f} min")
        if not args.no_verdict:
            write_verdict(args.plan.parent)
        return 0
    except (PlanError, ExperimentError, ArtifactError, ConfigError) as exc:
        raise UsageError(str(exc)) from None


def _status(experiment: Experiment) -> int:
    for unit in experiment.done():
        record = experiment.unit_record(unit) or {}
        seconds = record.get("seconds")
        wall = f"{seconds / 60:.1f} min" if isinstance(seconds, int | float) else ""
        print(f"done     {unit.name}  {wall}")
    for unit in experiment.missing():
        print(f"missing  {unit.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
