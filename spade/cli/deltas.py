"""spade-eval deltas: one stored leaderboard row against another, without evaluating again."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spade.cli.errors import UsageError, one_line_errors
from spade.cli.leaderboard_actions import DEFAULT_LEADERBOARD
from spade.leaderboard import Leaderboard, LeaderboardError, Row, deltas_table


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spade-eval deltas",
        description="Print a stored row's per-benchmark deltas against another row of the same "
        "leaderboard: paired over shared samples, with bootstrap (or McNemar) CIs and p-values.",
    )
    parser.add_argument("label", help="the row to compare")
    parser.add_argument("--baseline", required=True, help="the row it is compared against")
    parser.add_argument(
        "--leaderboard",
        type=Path,
        default=DEFAULT_LEADERBOARD,
        help=f"the leaderboard file (default {DEFAULT_LEADERBOARD})",
    )
    parser.add_argument(
        "--metric",
        help=(
            "compare this per-sample metric (e.g. return: an episode's partial credit), not "
            "each benchmark's primary"
        ),
    )
    return parser


@one_line_errors("spade-eval deltas")
def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.leaderboard.is_file():
        raise UsageError(f"leaderboard {args.leaderboard} does not exist")
    try:
        board = Leaderboard.load(args.leaderboard)
        row, baseline = board.row(args.label), board.row(args.baseline)
    except LeaderboardError as exc:
        raise UsageError(str(exc)) from None
    if args.metric is not None:
        check_metric(args.metric, [row, baseline])
    print(
        f"{row.label!r} against {baseline.label!r} ({args.leaderboard}); * = significant at 0.05:"
    )
    print(deltas_table(row, baseline, metric=args.metric))
    return 0


def check_metric(metric: str, rows: list[Row]) -> None:
    """A metric no row has, per sample or as a primary, is a typo: say which ones they have."""
    known = sorted(
        {
            name
            for row in rows
            for benchmark, score in row.benchmarks.items()
            for name in (score.primary, *row.sample_metrics.get(benchmark, {}))
        }
    )
    if metric not in known:
        raise UsageError(f"--metric {metric}: neither row has it (they have: {', '.join(known)})")


if __name__ == "__main__":
    sys.exit(main())
