"""What spade-eval does with a finished run: deltas, leaderboard rows, the regression gate."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from spade.cli.errors import UsageError
from spade.evals.samples import SampleResult
from spade.leaderboard import (
    Leaderboard,
    LeaderboardError,
    Provenance,
    RunResults,
    compare,
    deltas_table,
    gate_failed,
    gate_report,
    locked,
    row_from_run,
)

DEFAULT_LEADERBOARD = Path("leaderboards/main.json")


def baseline_board(args: argparse.Namespace) -> tuple[Path, Leaderboard] | None:
    """The leaderboard `--baseline` reads: --leaderboard, else the shipped default."""
    path = args.leaderboard or DEFAULT_LEADERBOARD
    if not path.exists():
        if args.baseline:
            raise UsageError(f"--baseline {args.baseline}: leaderboard {path} does not exist")
        return None
    return path, Leaderboard.load(path)


def print_baseline_deltas(args: argparse.Namespace, run: RunResults) -> None:
    found = baseline_board(args)
    if found is None:
        return
    path, board = found
    # Without --baseline: the board's declared baseline, else its first row (even alone).
    row = board.row(args.baseline) if args.baseline else board.baseline_row()
    if row is None and not args.baseline and board.rows:
        row = board.rows[0]
    if row is None:
        return
    print(f"\nDeltas against {row.label!r} ({path}); * = significant at 0.05:")
    print(deltas_table(run, row, metric=args.metric))


def apply_leaderboard_actions(
    args: argparse.Namespace,
    document: dict[str, Any],
    samples: list[SampleResult],
    output: Path,
) -> int:
    """Print deltas, update a leaderboard, run the gate; the exit status (1 = gate failed)."""
    run = RunResults.from_records(document, samples, output)
    try:
        print_baseline_deltas(args, run)
        if args.leaderboard:
            provenance = Provenance.collect(document["settings"].get("command"), output)
            with locked(args.leaderboard):  # other evaluations may be adding their rows
                board = Leaderboard.load(args.leaderboard, missing_ok=True)
                replaced = board.upsert(row_from_run(run, args.label, provenance))
                saved = board.save(args.leaderboard)
            verb = "replaced" if replaced else "added"
            print(
                f"\n{verb} row {args.label!r} in {saved.json} (+ {saved.markdown.name}, "
                f"{saved.png.name})"
            )
        if args.compare:
            stored = Leaderboard.load(args.compare).row(args.label)
            results = compare(run, stored)
            print(f"\nRegression gate against {args.label!r} ({args.compare}):")
            print(gate_report(results))
            return 1 if gate_failed(results) else 0
    except LeaderboardError as exc:
        raise UsageError(str(exc)) from None
    return 0
