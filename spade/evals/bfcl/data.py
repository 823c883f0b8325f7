"""BFCL v4 multi-turn entries: questions, ground truth and function docs, prepared as BFCL does.

Files come from `--data-dir`'s `bfcl/` folder, else from the data the bfcl-eval wheel ships
(the same bytes; both are checked against the declaration's sha256). Preparation follows
`bfcl_eval.utils.load_dataset_entry` for multi-turn categories: each entry's function docs
are those of its `involved_classes`, in that order; the docs named in `missed_function`
are taken out and kept for the turn where they are offered again; every remaining doc's
description gets BFCL's Python language hint (the held-out ones do not: BFCL adds the hint
after moving them, so they come back without it).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from spade.evals.declarations import Declaration, DeclarationError, file_sha256

CATEGORIES = ("base", "miss_func", "miss_param", "long_context")
"""BFCL's order of the four multi-turn categories (`category_mapping.MULTI_TURN_CATEGORY`)."""
DATA_FOLDER = "bfcl"
"""Where the files live under `--data-dir`."""
INSTALL_HINT = "pip install --no-deps bfcl-eval==2026.3.23 mpmath"
# bfcl_eval.utils._get_language_specific_hint for Python categories.
PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
# bfcl_eval.constants.executable_backend_config.MULTI_TURN_FUNC_DOC_FILE_MAPPING (the
# classes these four categories use).
FUNC_DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}

FunctionDoc = dict[str, Any]


@dataclass(frozen=True)
class BfclEntry:
    """One multi-turn entry, ready for the inference loop and the checker."""

    id: str
    category: str
    """One of `CATEGORIES`."""
    question: list[list[dict[str, Any]]]
    """Per turn, the user messages of that turn (empty on a held-out function's turn)."""
    initial_config: dict[str, Any]
    involved_classes: list[str]
    functions: list[FunctionDoc]
    """Docs offered from the first turn (hinted; held-out ones removed)."""
    ground_truth: list[list[str]]
    missed_functions: dict[int, list[FunctionDoc]] = field(default_factory=dict)
    """Turn index -> docs offered again at that turn (`miss_func` only)."""

    @property
    def long_context(self) -> bool:
        # BFCL: `"long_context" in test_category or "composite" in test_category`.
        return self.category == "long_context"

    def checker_entry(self) -> dict[str, Any]:
        """The fields of the test entry that bfcl-eval's executor and checker read."""
        return {
            "id": self.id,
            "initial_config": self.initial_config,
            "involved_classes": self.involved_classes,
        }


def category_of(sample_id: str) -> str:
    """`multi_turn_miss_func_3` -> `miss_func` (BFCL: the id without its index)."""
    return sample_id.rsplit("_", 1)[0].removeprefix("multi_turn_")


def question_file(category: str) -> str:
    return f"BFCL_v4_multi_turn_{category}.json"


def answer_file(category: str) -> str:
    return f"possible_answer/BFCL_v4_multi_turn_{category}.json"


def wheel_data_dir() -> Path:
    """The data folder inside the installed bfcl-eval package."""
    try:
        import bfcl_eval  # its __init__ is empty: importing it creates no folders
    except ImportError:
        raise DeclarationError(f"the bfcl runner needs bfcl-eval: {INSTALL_HINT}") from None
    return Path(bfcl_eval.__file__).resolve().parent / "data"


def data_folder(declaration: Declaration, data_dir: Path | None) -> Path:
    """`DATA_DIR/bfcl`, else the wheel's data; checked against the declared sha256 either way
    (the wheel's files are byte-identical to the copies the declaration was written for)."""
    if data_dir is not None:
        declaration.verify_data(data_dir)
        return data_dir / DATA_FOLDER
    folder = wheel_data_dir()
    for item in declaration.data:
        path = folder / item.path.removeprefix(f"{DATA_FOLDER}/")
        if not path.is_file():
            raise DeclarationError(f"{declaration.name}: {path} is missing from bfcl-eval")
        if file_sha256(path) != item.sha256:
            raise DeclarationError(
                f"{declaration.name}: {path} differs from the declared data (sha256 "
                f"{file_sha256(path)[:12]}…); install bfcl-eval==2026.3.23 or pass --data-dir"
            )
    return folder


def load_entries(folder: Path, categories: Iterable[str]) -> dict[str, BfclEntry]:
    """Every entry of `categories`, by id, in BFCL's order (category, then file order)."""
    entries: dict[str, BfclEntry] = {}
    for category in categories:
        questions = _read_jsonl(folder / question_file(category))
        answers = {
            row["id"]: row["ground_truth"] for row in _read_jsonl(folder / answer_file(category))
        }
        for row in questions:
            if row["id"] not in answers:
                raise DeclarationError(
                    f"{folder / answer_file(category)}: no answer for {row['id']}"
                )
            entries[row["id"]] = _prepare(row, category, answers[row["id"]], folder)
    return entries


def _prepare(row: dict[str, Any], category: str, truth: list[list[str]], folder: Path) -> BfclEntry:
    offered = [
        (name, index)
        for name in row["involved_classes"]
        for index in range(len(_func_docs(folder, name)))
    ]
    missed: dict[int, list[FunctionDoc]] = {}
    for turn, names in row.get("missed_function", {}).items():
        missed[int(turn)] = []
        for wanted in names:
            # BFCL moves the first doc of that name out of the offered list.
            for position, (name, index) in enumerate(offered):
                if _func_docs(folder, name)[index]["name"] == wanted:
                    missed[int(turn)].append(_func_docs(folder, name)[index])
                    del offered[position]
                    break
    return BfclEntry(
        id=row["id"],
        category=category,
        question=row["question"],
        initial_config=row.get("initial_config", {}),
        involved_classes=list(row["involved_classes"]),
        functions=[_hinted_docs(folder, name)[index] for name, index in offered],
        ground_truth=truth,
        missed_functions=missed,
    )


# Docs are shared between entries (800 entries would otherwise hold 800 copies); nothing
# downstream mutates them: prompts and tool schemas are built from copies.
@cache
def _hinted_docs(folder: Path, class_name: str) -> tuple[FunctionDoc, ...]:
    hinted = copy.deepcopy(_func_docs(folder, class_name))
    for doc in hinted:
        doc["description"] = doc["description"] + PYTHON_HINT
    return hinted


@cache
def _func_docs(folder: Path, class_name: str) -> tuple[FunctionDoc, ...]:
    if class_name not in FUNC_DOC_FILES:
        raise DeclarationError(f"BFCL class {class_name!r} has no function doc file")
    return tuple(_read_jsonl(folder / "multi_turn_func_doc" / FUNC_DOC_FILES[class_name]))


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    # BFCL's .json files are JSON Lines.
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DeclarationError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return [json.loads(line) for line in lines if line.strip()]
    except json.JSONDecodeError as exc:
        raise DeclarationError(f"{path}: not JSON Lines ({exc})") from None
