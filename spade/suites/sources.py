"""Where freeze gets env sources: files, directories of them, or a training run's memory.

A directory holding `memory.json` is a training run: that file is a JSON list of accepted
envs, `{"id", "source", "kind", "skill", "difficulty", "document_id", "win_rate", "regret",
"step", "hint"}` (only `source` is required here). Any other directory contributes its
`*.py` files in name order, skipping `_`-prefixed ones such as `__init__.py`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spade.suites.errors import SuiteError
from spade.suites.manifest import HAND_WRITTEN

MEMORY_FILE = "memory.json"
UNKNOWN_DOCUMENT = "unknown"
_METADATA_KEYS = ("kind", "skill", "difficulty", "hint")
_PROVENANCE_TYPES: dict[str, tuple[type, ...]] = {
    "step": (int,),
    "win_rate": (int, float),
    "regret": (int, float),
}


@dataclass(frozen=True)
class Candidate:
    """One env source offered to freeze, before any check."""

    origin: str
    """Where it came from, for reports: a file path or `RUN/memory.json#ID`."""
    filename: str
    """Proposed file name in the suite's envs/ folder."""
    source: str
    source_document: str = HAND_WRITTEN
    metadata: dict[str, str] = field(default_factory=dict)
    """Fallback kind/skill/difficulty/hint (from a memory entry); the env class's own
    `metadata` takes precedence."""
    provenance: dict[str, Any] | None = None


def collect_sources(paths: Sequence[str | Path]) -> list[Candidate]:
    """Every candidate the given paths name, in the order given."""
    if not paths:
        raise SuiteError("no env sources given")
    candidates: list[Candidate] = []
    for path in map(Path, paths):
        if path.is_file():
            candidates.append(_from_file(path))
        elif (path / MEMORY_FILE).is_file():
            candidates += _from_memory(path / MEMORY_FILE)
        elif path.is_dir():
            files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
            if not files:
                raise SuiteError(f"{path}: no *.py env sources and no {MEMORY_FILE}")
            candidates += [_from_file(file) for file in files]
        else:
            raise SuiteError(f"{path}: no such file or directory")
    return candidates


def safe_filename(name: str) -> str:
    """A file name that the manifest format accepts (`[A-Za-z0-9_][A-Za-z0-9_.-]*.py`)."""
    stem = name[:-3] if name.endswith(".py") else name
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem)
    if not stem or not re.match(r"[A-Za-z0-9_]", stem):
        stem = f"env_{stem}"
    return f"{stem}.py"


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise SuiteError(f"{path}: not UTF-8 text") from None


def _from_file(path: Path) -> Candidate:
    return Candidate(origin=str(path), filename=safe_filename(path.name), source=_read_text(path))


def _from_memory(path: Path) -> list[Candidate]:
    try:
        entries = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(entries, list):
        raise SuiteError(f"{path}: expected a JSON list of accepted envs")
    return [_from_memory_entry(path, index, entry) for index, entry in enumerate(entries)]


def _from_memory_entry(path: Path, index: int, entry: object) -> Candidate:
    where = f"{path}: entry {index}"
    if not isinstance(entry, dict):
        raise SuiteError(f"{where}: expected an object")
    if not isinstance(entry.get("source"), str):
        raise SuiteError(f"{where}: 'source' must be a string of env code")
    memory_id = entry.get("id")
    memory_id = memory_id if isinstance(memory_id, str) and memory_id else f"entry{index}"
    provenance: dict[str, Any] = {"memory_id": memory_id}
    for key, types in _PROVENANCE_TYPES.items():
        value = entry.get(key)
        if isinstance(value, types) and not isinstance(value, bool):
            provenance[key] = value
    document = entry.get("document_id")
    return Candidate(
        origin=f"{path}#{memory_id}",
        filename=safe_filename(memory_id),
        source=entry["source"],
        source_document=document if isinstance(document, str) and document else UNKNOWN_DOCUMENT,
        metadata={k: entry[k] for k in _METADATA_KEYS if isinstance(entry.get(k), str)},
        provenance=provenance,
    )
