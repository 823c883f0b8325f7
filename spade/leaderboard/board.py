"""A leaderboard file: load (schema-checked), add or replace rows, save atomically with renders.

`FILE.json` is the record; `FILE.md` and `FILE.png` beside it are regenerated on every save.
"""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from spade.atomic import write_atomic
from spade.leaderboard.errors import LeaderboardError
from spade.leaderboard.render import compute_deltas, render_markdown, render_png
from spade.leaderboard.row import GATE_SETTINGS, Row
from spade.leaderboard.validation import (
    PER_SAMPLE,
    leaderboard_schema,
    raise_first,
    read_json,
    schema_errors,
    score_errors,
    without_scores,
)

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class SavedFiles:
    json: Path
    markdown: Path
    png: Path


@dataclass
class Leaderboard:
    rows: list[Row] = field(default_factory=list)
    baseline: str | None = None
    """Label of the row renders compare against; None means the first row."""

    @classmethod
    def load(cls, path: str | Path, missing_ok: bool = False) -> Leaderboard:
        """Read and validate `path`; a missing file is an empty board when `missing_ok`.

        Raises `LeaderboardError` with one line naming the file and the first bad field.
        """
        file = Path(path)
        if missing_ok and not file.exists():
            return cls()
        return cls.from_json(read_json(file), str(file))

    @classmethod
    def from_json(cls, data: object, where: str = "leaderboard") -> Leaderboard:
        raise_first(where, leaderboard_errors(data))
        assert isinstance(data, dict)
        return cls([Row.from_json(row) for row in data["rows"]], data.get("baseline"))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        if self.baseline is not None:
            data["baseline"] = self.baseline
        data["rows"] = [row.to_json() for row in self.rows]
        return data

    @property
    def labels(self) -> list[str]:
        return [row.label for row in self.rows]

    def row(self, label: str) -> Row:
        """The row labelled `label`; `LeaderboardError` listing the labels when there is none."""
        for row in self.rows:
            if row.label == label:
                return row
        known = ", ".join(self.labels) or "none"
        raise LeaderboardError(f"no row labelled {label!r} (labels: {known})")

    def upsert(self, row: Row) -> bool:
        """Add `row`, or replace the row with its label in place; True when it replaced one.

        Gate settings set by hand on the replaced row (`settings.tolerances`,
        `settings.max_changed_samples`) carry over when the new row has none: re-recording a CI
        reference must not silently reset its gate.
        """
        for index, old in enumerate(self.rows):
            if old.label == row.label:
                kept = {
                    k: old.settings[k]
                    for k in GATE_SETTINGS
                    if k in old.settings and k not in row.settings
                }
                if kept:
                    row = replace(row, settings={**row.settings, **kept})
                self.rows[index] = row
                return True
        self.rows.append(row)
        return False

    def baseline_row(self) -> Row | None:
        """The row renders compare against: `baseline`, else the first of two or more rows."""
        if self.baseline is not None:
            return self.row(self.baseline)
        return self.rows[0] if len(self.rows) > 1 else None

    def save(self, path: str | Path) -> SavedFiles:
        """Write `path` and regenerate `<stem>.md` and `<stem>.png` beside it, each atomically.

        Everything is rendered before anything is written, so a failure (bad value, plotting
        error) leaves all three files as they were.
        """
        file = Path(path)
        data = self.to_json()
        raise_first(f"{file} (not written)", leaderboard_errors(data))
        try:
            text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        except ValueError as exc:
            raise LeaderboardError(f"{file} (not written): {exc}") from None
        baseline = self.baseline_row()
        deltas = compute_deltas(self.rows, baseline)
        png = file.with_suffix(".png")
        markdown = render_markdown(file.stem, self.rows, baseline, deltas, chart=png.name)
        image = render_png(self.rows, baseline, deltas)
        saved = SavedFiles(file, file.with_suffix(".md"), png)
        write_atomic(saved.json, text)
        write_atomic(saved.markdown, markdown)
        write_atomic(saved.png, image)
        return saved


@contextmanager
def locked(path: str | Path) -> Iterator[None]:
    """Hold `path`'s lock (`.<name>.lock` beside it) for a load-change-save: evaluations run in
    parallel add their rows to one leaderboard, and two unlocked saves would drop a row."""
    file = Path(path)
    lock = file.with_name(f".{file.name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def leaderboard_errors(data: object) -> list[str]:
    """Every way `data` fails the leaderboard format, each as `field.path: message`."""
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(rows, list):
        return schema_errors(data, leaderboard_schema())
    outline = {**data, "rows": [without_scores(row) for row in rows]}
    errors = schema_errors(outline, leaderboard_schema())
    for index, row in enumerate(rows):
        errors += score_errors(row, f"rows[{index}].")
    if errors:
        return errors
    seen: dict[str, int] = {}
    for index, row in enumerate(data["rows"]):
        if row["label"] in seen:
            errors.append(
                f"rows[{index}].label: {row['label']!r} repeats rows[{seen[row['label']]}]"
            )
        seen.setdefault(row["label"], index)
        for key in PER_SAMPLE:
            for name in row.get(key, {}):
                if name not in row["benchmarks"]:
                    errors.append(f"rows[{index}].{key}.{name}: no such benchmark in the row")
    if "baseline" in data and data["baseline"] not in seen:
        errors.append(f"baseline: {data['baseline']!r} is not the label of a row")
    return errors
