"""Presets: named lists of benchmarks (`benchmarks/presets.yaml`).

A preset is a list of benchmark names (each declaration's own `slices.PRESET` applies), or a
mapping whose values set, per benchmark, the slice size (`NAME: SIZE`) or, as a mapping, any
of: `n` (the slice size), `generation` (fields of the declaration's generation settings) and
`options` (runner options). Overrides change what a benchmark measures, so a result records
the settings it ran with and rows that differ in them are not compared (spade.leaderboard).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from spade.evals.declarations import (
    BENCHMARKS_DIR,
    Declaration,
    DeclarationError,
    Generation,
    first_error,
)

PRESETS_FILE = "presets.yaml"


class PresetEntry(BaseModel):
    """One benchmark's settings in a preset written as a mapping."""

    model_config = ConfigDict(extra="forbid")

    n: int | None = None
    """Slice size (None: every sample); unset: the declaration's own for this preset."""
    generation: dict[str, Any] = {}
    options: dict[str, Any] = {}

    def apply(self, declaration: Declaration) -> Declaration:
        """The declaration with this entry's generation settings and options."""
        if not self.generation and not self.options:
            return declaration
        try:
            generation = Generation.model_validate(
                {**declaration.generation.model_dump(), **self.generation}
            )
        except ValidationError as exc:
            field, message = first_error(exc)
            where = f"{PRESETS_FILE}: {declaration.name}"
            raise DeclarationError(f"{where}: generation.{field}: {message}") from None
        options = {**declaration.options, **self.options}
        return declaration.model_copy(update={"generation": generation, "options": options})


def load_presets(directory: Path = BENCHMARKS_DIR) -> dict[str, list[str]]:
    """Each preset's benchmarks, in order (see `preset_entries` for a preset's settings)."""
    return {name: list(members) for name, members in _raw_presets(directory).items()}


def preset_entries(preset: str | None, directory: Path = BENCHMARKS_DIR) -> dict[str, PresetEntry]:
    """The per-benchmark settings of a preset written as a mapping; none for a list."""
    members = _raw_presets(directory).get(preset or "", [])
    if not isinstance(members, dict):
        return {}
    entries = {}
    for name, value in members.items():
        raw = value if isinstance(value, dict) else {"n": value}
        try:
            entries[str(name)] = PresetEntry.model_validate(raw)
        except ValidationError as exc:
            field, message = first_error(exc)
            where = f"{PRESETS_FILE}: {preset}: {name}"
            raise DeclarationError(f"{where}: {field}: {message}") from None
    return entries


def preset_sizes(preset: str | None, directory: Path = BENCHMARKS_DIR) -> dict[str, int | None]:
    """The slice sizes a preset written as a mapping sets (`NAME: SIZE`, or `n:`); a preset
    written as a list sets none (each declaration's `slices.PRESET` applies)."""
    return {
        name: entry.n
        for name, entry in preset_entries(preset, directory).items()
        if "n" in entry.model_fields_set
    }


def _raw_presets(directory: Path) -> dict[str, Any]:
    raw = yaml.safe_load((directory / PRESETS_FILE).read_text(encoding="utf-8"))
    return {str(name): members for name, members in raw.items()}
