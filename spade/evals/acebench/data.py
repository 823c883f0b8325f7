"""The ACEBench agent entries: questions joined with their possible answers.

Files are JSON Lines despite the `.json` name. Each entry carries its tool schemas, the
initial config, the involved classes, the ground-truth end state per class and the
milestones (one ordered list of call strings, or several alternative lists).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from spade.evals.acebench.errata import CLASS_ALIASES, UNCHECKED
from spade.evals.acebench.scenario import APP_NAMES

Subset = Literal["multi_step", "multi_turn"]
SUBSETS: tuple[Subset, ...] = ("multi_step", "multi_turn")


class AceBenchDataError(ValueError):
    """A data file is missing, malformed, or disagrees with its partner file."""


@dataclass(frozen=True)
class Entry:
    id: str
    subset: Subset
    question: str
    """multi_step: the task; multi_turn: the instruction for the simulated user."""
    initial_config: dict[str, Any]
    functions: list[dict[str, Any]]
    involved_classes: list[str]
    ground_truth: dict[str, dict[str, Any]]
    """Class -> its expected saved attributes (names normalised; UNCHECKED classes removed)."""
    milestones: list[list[str]]
    """Alternative call sequences (one list when the data gives a single path)."""
    unchecked: dict[str, str]
    """Class -> why its ground truth is not compared (see errata)."""


def load_entries(question_file: Path, answer_file: Path, subset: Subset) -> list[Entry]:
    questions, answers = _read_jsonl(question_file), _read_jsonl(answer_file)
    if [q.get("id") for q in questions] != [a.get("id") for a in answers]:
        raise AceBenchDataError(f"{question_file} and {answer_file} list different entry ids")
    entries = []
    for question, answer in zip(questions, answers, strict=True):
        try:
            entries.append(_entry(question, answer, subset, answer_file))
        except (KeyError, TypeError, AttributeError) as exc:
            raise AceBenchDataError(
                f"{question_file} / {answer_file}: entry {question.get('id')!r} is malformed "
                f"({type(exc).__name__}: {exc})"
            ) from None
    return entries


def _entry(question: dict[str, Any], answer: dict[str, Any], subset: Subset, path: Path) -> Entry:
    entry_id = str(question["id"])
    unchecked = UNCHECKED.get(entry_id, {})
    ground_truth: dict[str, dict[str, Any]] = {}
    for item in answer["ground_truth"]:
        for raw_name, state in item.items():
            name = CLASS_ALIASES.get(raw_name, raw_name)
            if name not in APP_NAMES:
                raise AceBenchDataError(f"{path}: {entry_id}: unknown class {raw_name!r}")
            if name not in unchecked:
                ground_truth[name] = state
    stones = answer["mile_stone"]
    milestones = [list(s) for s in stones] if stones and isinstance(stones[0], list) else [stones]
    return Entry(
        id=entry_id,
        subset=subset,
        question=str(question["question"]),
        initial_config=dict(question.get("initial_config") or {}),
        functions=list(question["function"]),
        involved_classes=list(question["involved_classes"]),
        ground_truth=ground_truth,
        milestones=milestones,
        unchecked=dict(unchecked),
    )


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise AceBenchDataError(f"{path}: cannot read ({exc.strerror})") from None
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise AceBenchDataError(f"{path}:{number}: not JSON ({exc.msg})") from None
    return rows
