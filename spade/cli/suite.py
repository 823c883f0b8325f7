"""spade-suite: validate env sources; freeze, verify, list, show and publish suites."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tabulate import tabulate

from spade.cli.errors import UsageError, one_line_errors
from spade.envs.checks import ValidationReport, validate_source
from spade.sandbox import SandboxConfig


def read_source(path: str) -> str:
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{path}: no such file")
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read ({exc})") from None


def print_report(path: str, report: ValidationReport) -> None:
    rows = [("✓" if c.passed else "✗", c.name, c.detail) for c in report.checks]
    print(tabulate(rows, headers=["", "check", "detail"], tablefmt="simple"))
    verdict = "VALID" if report.valid else "INVALID"
    name = report.class_name or "?"
    ref = "n/a" if report.reference_return is None else f"{report.reference_return:.3f}"
    print(f"\n{path}: {verdict} ({name}, reference return {ref}, {report.seconds:.2f} s)")


def cmd_check(args: argparse.Namespace) -> int:
    source = read_source(args.file)
    if args.seeds < 1:
        raise UsageError(f"--seeds must be ≥ 1, got {args.seeds}")
    config = SandboxConfig(backend=args.backend, call_timeout_s=args.timeout)
    report = validate_source(source, Path(args.file).name, seeds=args.seeds, config=config)
    if args.json:
        keys = ("valid", "class_name", "checks", "reference_return", "seconds")
        data = report.to_json()
        print(json.dumps({k: data[k] for k in keys} | {"metadata": data["metadata"]}))
    else:
        print_report(args.file, report)
    return 0 if report.valid else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spade-suite", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="validate one env source in the sandbox")
    check.add_argument("file", help="Python file defining one *Env class")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument("--seeds", type=int, default=3, help="seeds to play (default 3)")
    check.add_argument("--timeout", type=float, default=5.0, help="seconds per env call")
    check.add_argument(
        "--backend",
        default="auto",
        choices=["auto", "bwrap", "process", "docker"],
        help="sandbox backend (default: bwrap when available)",
    )
    check.set_defaults(run=cmd_check)
    return parser


@one_line_errors("spade-suite")
def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
