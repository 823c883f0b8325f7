"""spade-train curves: the training curves of one or more runs on one figure (PNG).

spade-train curves RUN_DIR [RUN_DIR ...] [--out FILE]

Each run directory's metrics.jsonl is drawn on the same panels as `RUN_DIR/curves.png` (designer
validity, agent success, regret, return, progress, optimizer steps, samples with gradient,
rollout-vs-learner mismatch), one line per run, labelled with its folder name: how the SPADE
arm and the fixed baseline of one budget compare. A table of the same runs follows on stdout
(iterations with an optimizer step, samples with gradient per role, valid designs, regret,
return, truncation, mismatch, seconds an iteration).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from spade.cli.errors import UsageError, writing_to


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spade-train curves",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("runs", type=Path, nargs="+", metavar="RUN_DIR", help="spade-train runs")
    parser.add_argument("--out", type=Path, default=Path("curves.png"), help="the PNG to write")
    return parser


def curves(argv: list[str]) -> int:
    from spade.selfplay.run_log import plot_curves, read_records
    from spade.selfplay.run_summary import summary_table

    args = build_parser().parse_args(argv)
    labels = [run.resolve().name for run in args.runs]
    if len(set(labels)) != len(labels):
        raise UsageError(
            f"two runs share a folder name ({', '.join(labels)}): the legend needs each once"
        )
    try:
        runs = {label: read_records(run) for label, run in zip(labels, args.runs, strict=True)}
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    with writing_to(args.out):
        out = plot_curves(runs, args.out)
    print(f"curves: {out} ({', '.join(labels)})")
    print(summary_table(runs))
    return 0
