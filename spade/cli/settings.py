"""The options every spade-train command takes: `--config FILE` and `--set KEY=VALUE`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from spade.cli.errors import UsageError


def command_parser(
    prog: str, doc: str | None, config: str, example: str
) -> argparse.ArgumentParser:
    """A spade-train command's parser, `doc` its help, with `--config` (`config` says which
    YAML file) and `--set` (`example` shows one override)."""
    parser = argparse.ArgumentParser(
        prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--config", type=Path, help=config)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"override a config field, e.g. {example} (YAML value)",
    )
    return parser


def set_overrides(items: list[str]) -> dict[str, Any]:
    """`["agent.plays=4", ...]` as `{"agent.plays": 4}` (each value read as YAML)."""
    values: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--set {item!r}: expected KEY=VALUE")
        values[key] = yaml.safe_load(raw)
    return values
