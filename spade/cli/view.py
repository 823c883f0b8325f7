"""spade-eval view: one static HTML report of a results dir, a run dir or an experiment folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spade.cli.errors import UsageError, one_line_errors, writing_to
from spade.viewer import ViewError, write_report

DEFAULT_NAME = "report.html"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spade-eval view",
        description="Write one self-contained HTML file (opens from disk, works offline) showing "
        "a spade-eval results dir, a spade-train run dir or a spade-experiment folder (arms, "
        "seeds, curves and the samples that changed between arms).",
    )
    parser.add_argument(
        "dir",
        type=Path,
        help="a results dir (results.json), a run dir (metrics.jsonl) or an experiment folder "
        "(plan.yaml)",
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="DIR2",
        help="a second results dir: the samples whose score changed, side by side",
    )
    parser.add_argument("--out", type=Path, help=f"the HTML file (default DIR/{DEFAULT_NAME})")
    return parser


@one_line_errors("spade-eval view")
def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = args.out or args.dir / DEFAULT_NAME
    with writing_to(out):
        try:
            write_report(args.dir, out, args.compare)
        except ViewError as exc:
            raise UsageError(str(exc)) from None
    print(f"report: {out} ({out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
