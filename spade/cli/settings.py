"""`--set KEY=VALUE` overrides, as every spade-train command takes them."""

from __future__ import annotations

from typing import Any

import yaml

from spade.cli.errors import UsageError


def set_overrides(items: list[str]) -> dict[str, Any]:
    """`["agent.plays=4", ...]` as `{"agent.plays": 4}` (each value read as YAML)."""
    values: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--set {item!r}: expected KEY=VALUE")
        values[key] = yaml.safe_load(raw)
    return values
