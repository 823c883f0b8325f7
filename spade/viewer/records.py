"""Reading the files a results or run directory holds, with one-line errors that name them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spade.viewer.errors import ViewError


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ViewError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ViewError(f"{path}: not valid JSON ({exc})") from None


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every non-blank line of a JSON Lines file, each a JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ViewError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ViewError(f"{path}: not UTF-8 text ({exc})") from None
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ViewError(f"{path} line {number}: not valid JSON ({exc})") from None
        if not isinstance(record, dict):
            raise ViewError(f"{path} line {number}: expected a JSON object, got {record!r:.60}")
        records.append(record)
    return records
