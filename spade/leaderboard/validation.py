"""JSON Schema checks reported as one-line messages naming the field path."""

from __future__ import annotations

import functools
import json
import math
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from spade.leaderboard.errors import LeaderboardError

_MAX_MESSAGE = 200


@functools.cache
def leaderboard_schema() -> dict[str, Any]:
    text = resources.files("spade.leaderboard").joinpath("leaderboard.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def schema_errors(data: object, schema: dict[str, Any]) -> list[str]:
    """Every way `data` fails `schema`, as `field.path: message`, in field order."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{field_path(e.absolute_path)}: {_shorten(e.message)}" for e in errors]


def raise_first(where: str, errors: list[str]) -> None:
    """Raise a one-line `LeaderboardError` for the first of `errors`, counting the rest."""
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise LeaderboardError(f"{where}: {errors[0]}{more}")


def field_path(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".") or "(top level)"


def read_json(path: Path) -> object:
    """JSON from a file; NaN and Infinity are rejected (they are not JSON, and break stats)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LeaderboardError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LeaderboardError(f"{path}: cannot read ({exc})") from None
    return parse_json(text, str(path))


def parse_json(text: str, where: str) -> object:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise LeaderboardError(
            f"{where}: not valid JSON ({exc.msg} at line {exc.lineno})"
        ) from None
    except ValueError as exc:
        raise LeaderboardError(f"{where}: {exc}") from None


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not a valid JSON number")


def _shorten(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 3] + "..."


# jsonschema costs tens of microseconds per value and one row can hold 100k sample scores. The
# schema file still describes them; these check the same rule quickly, on an outline of the
# data that has the scores left out.


PER_SAMPLE = ("samples", "outputs", "answers", "sample_metrics")
"""The row fields keyed by benchmark (then by sample id; `sample_metrics` by metric first)."""
_DIGEST = re.compile(r"[0-9a-f]{16}")


def without_scores(row: object) -> object:
    """A row with each benchmark's sample scores and digests emptied, for the schema check."""
    if not isinstance(row, dict):
        return row
    outline = dict(row)
    for key in PER_SAMPLE:
        if isinstance(row.get(key), dict):
            outline[key] = {name: {} for name in row[key]}
    if isinstance(row.get("sample_metrics"), dict):  # keep the metric level for the schema
        outline["sample_metrics"] = {
            name: _emptied(metrics) for name, metrics in row["sample_metrics"].items()
        }
    return outline


def _emptied(metrics: object) -> object:
    """One benchmark's `{metric: {sample_id: value}}` with each metric's values left out."""
    if not isinstance(metrics, dict):
        return metrics
    return {name: {} if isinstance(values, dict) else values for name, values in metrics.items()}


def score_errors(row: object, where: str) -> list[str]:
    """Sample scores and metric values that are not finite numbers and digests that are not 16
    hex characters, as `where.samples.NAME.ID: ...` (or `where.sample_metrics.NAME.METRIC.ID`,
    `where.outputs...`, `where.answers...`)."""
    if not isinstance(row, dict):
        return []
    errors = [
        error
        for name, scores in _per_sample(row, "samples")
        for error in _number_errors(scores, f"{where}samples.{name}")
    ]
    for name, metrics in _per_sample(row, "sample_metrics"):
        for metric, values in metrics.items():
            if isinstance(values, dict):  # else the schema check on the outline says so
                errors += _number_errors(values, f"{where}sample_metrics.{name}.{metric}")
    return errors + _digest_errors(row, "outputs", where) + _digest_errors(row, "answers", where)


def _number_errors(values: dict[str, Any], where: str) -> list[str]:
    errors = []
    for sample_id, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            errors.append(f"{where}.{sample_id}: {value!r} is not a number")
        elif not math.isfinite(value):
            errors.append(f"{where}.{sample_id}: {value!r} is not finite")
    return errors


def _digest_errors(row: dict[str, Any], key: str, where: str) -> list[str]:
    return [
        f"{where}{key}.{name}.{sample_id}: {digest!r} is not 16 hex characters"
        for name, digests in _per_sample(row, key)
        for sample_id, digest in digests.items()
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest)
    ]


def _per_sample(row: dict[str, Any], key: str) -> list[tuple[str, dict[str, Any]]]:
    # A benchmark entry that is not an object is reported by the schema check on the outline.
    entries = row.get(key)
    if not isinstance(entries, dict):
        return []
    return [(name, values) for name, values in entries.items() if isinstance(values, dict)]
