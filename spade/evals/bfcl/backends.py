"""bfcl-eval's executable backends and checker, used as they are (imported, not copied).

`execute_multi_turn_func_call` builds each backend instance from `initial_config` on first
use and keeps it in its module's globals under `{model_name}_{entry id}_{class}_instance`:
that is how state persists across steps and turns, and why every episode and every scoring
here gets its own `namespace` as the model name (and drops its instances when done; BFCL
never frees them). `multi_turn_checker` runs the model's calls and the ground truth on fresh
instances (`_eval` and `_ground_truth_eval` suffixes) and compares state and results turn by
turn. These functions run inside the worker process (`_worker.py`); they are plain
functions so that the speed benchmark can also time them in-process.
"""

from __future__ import annotations

import builtins
import inspect
import re
from functools import cache
from typing import Any

from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

from spade.evals.bfcl.call_guard import refusal

REFUSED_PLACEHOLDER = "spade_refused_call()"
"""What a refused call is replaced with: `eval` answers it with a NameError, runs nothing."""
_TURN = re.compile(r"\bturn (\d+)")


@cache
def backend_methods(class_name: str) -> frozenset[str]:
    """Public method names of a backend instance (what BFCL maps to that instance)."""
    import importlib

    module = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
    instance = getattr(module, class_name)()
    return frozenset(
        name
        for name, _ in inspect.getmembers(instance, inspect.ismethod)
        if not name.startswith("_")
    )


def _resolvable(name: str) -> bool:
    return name in vars(multi_turn_utils) or hasattr(builtins, name)


def guard(calls: list[str], classes: list[str]) -> tuple[list[str], dict[int, str]]:
    """The calls with refused ones replaced by a placeholder, and why each was refused."""
    methods = frozenset().union(*(backend_methods(c) for c in classes))
    reasons = {}
    for index, call in enumerate(calls):
        reason = refusal(call, methods.__contains__, _resolvable)
        if reason is not None:
            reasons[index] = reason
    return [REFUSED_PLACEHOLDER if i in reasons else c for i, c in enumerate(calls)], reasons


def refused_result(call: str, reason: str) -> str:
    # Worded like BFCL's own refusal ("Function call kill is not allowed.").
    return f"Error during execution: Function call {call[:100]} is not allowed: {reason}."


def execute(
    namespace: str, entry: dict[str, Any], long_context: bool, calls: list[str]
) -> list[str]:
    """Run one step's calls on the namespace's instances; one result text per call."""
    safe, reasons = guard(calls, entry["involved_classes"])
    results, _ = execute_multi_turn_func_call(
        safe,
        entry["initial_config"],
        entry["involved_classes"],
        namespace,
        entry["id"],
        long_context=long_context,
        is_evaL_run=False,
    )
    return [
        refused_result(calls[i], reasons[i]) if i in reasons else r for i, r in enumerate(results)
    ]


def score(
    namespace: str, entry: dict[str, Any], output: list[list[list[str]]], truth: list[list[str]]
) -> dict[str, Any]:
    """bfcl-eval's `multi_turn_checker` verdict on decoded output, as JSON-able fields."""
    refused: list[dict[str, Any]] = []
    safe_output = []
    for turn_index, turn in enumerate(output):
        safe_turn = []
        for step in turn:
            safe, reasons = guard(step, entry["involved_classes"])
            refused += [
                {"turn": turn_index, "call": step[i], "reason": r} for i, r in reasons.items()
            ]
            safe_turn.append(safe)
        safe_output.append(safe_turn)
    category = entry["id"].rsplit("_", 1)[0]
    try:
        verdict = multi_turn_checker(safe_output, truth, entry, category, namespace)
    except Exception as exc:  # the checker asserts; BFCL would stop the whole run here
        verdict = {
            "valid": False,
            "error_type": "spade:checker_error",
            "error_message": f"{type(exc).__name__}: {exc}",
        }
    finally:
        drop(namespace)
    return {
        "valid": bool(verdict["valid"]),
        "error_type": verdict.get("error_type"),
        "error_message": verdict.get("error_message"),
        "turn": _failed_turn(verdict),
        "refused": refused,
    }


def _failed_turn(verdict: dict[str, Any]) -> int | None:
    if verdict["valid"]:
        return None
    found = _TURN.search(str(verdict.get("error_message", "")))
    if found:
        return int(found.group(1))
    # A state mismatch names no turn; the checker has logged one result per turn checked.
    executed = verdict.get("execution_result") or verdict.get("details", {}).get("execution_result")
    return len(executed) - 1 if executed else None


def drop(namespace: str) -> int:
    """Forget the namespace's instances (all of its `_eval` and ground-truth ones too)."""
    state = vars(multi_turn_utils)
    names = [
        name for name in state if name.startswith(f"{namespace}_") and name.endswith("_instance")
    ]
    for name in names:
        del state[name]
    return len(names)
