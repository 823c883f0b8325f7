"""Score one entry's output as bfcl-eval's `_evaluate_single_multi_turn_entry` does.

An output is a list of turns, each a list of steps, each a list of call strings (the
predictions format; a step may also be a raw prompting-mode reply, as in BFCL's own result
files, which is decoded first). Before the checker runs: an output that is not a list fails
(`multi_turn:inference_error`), one with a different number of turns than the ground truth
fails (`multi_turn:force_terminated`), and steps that decode to nothing are dropped. The
rest is bfcl-eval's `multi_turn_checker`, in the backend worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spade.evals.bfcl.data import BfclEntry
from spade.evals.bfcl.decoding import DecodeError, decode_prompting
from spade.evals.bfcl.executor import BackendWorker, score_in_worker

Decoded = list[list[list[str]]]


@dataclass
class Verdict:
    valid: bool
    error_type: str | None = None
    error_message: str | None = None
    turn: int | None = None
    """The first turn that failed, where the checker says."""
    refused: list[dict[str, Any]] = field(default_factory=list)
    """Calls not executed because they could run arbitrary code (see `call_guard`)."""


@dataclass
class Normalised:
    decoded: Decoded | None
    """Per turn, the steps that hold calls; None when the output is not a list of turns."""
    malformed: list[dict[str, Any]] = field(default_factory=list)
    """Steps (or turns) that are neither call lists nor text; dropped, as BFCL drops what it
    cannot decode."""
    undecodable: list[dict[str, Any]] = field(default_factory=list)
    """Raw-text steps without calls (a turn's closing reply, or a broken call)."""


def normalise(output: Any) -> Normalised:
    if not isinstance(output, list):
        return Normalised(
            None, [{"turn": None, "error": f"not a list of turns: {type(output).__name__}"}]
        )
    result = Normalised([])
    assert result.decoded is not None
    for turn_index, turn in enumerate(output):
        steps: list[list[str]] = []
        if not isinstance(turn, list):
            result.malformed.append({"turn": turn_index, "error": "turn is not a list of steps"})
            turn = []
        for step_index, step in enumerate(turn):
            where = {"turn": turn_index, "step": step_index}
            if isinstance(step, str):
                try:
                    calls = decode_prompting(step)
                except DecodeError as exc:
                    result.undecodable.append({**where, "error": str(exc)})
                    continue
            elif isinstance(step, list) and all(isinstance(call, str) for call in step):
                calls = step
            else:
                result.malformed.append({**where, "error": "step is not a list of call strings"})
                continue
            # is_empty_execute_response: nothing, or a single empty call.
            if calls and calls != [""]:
                steps.append(calls)
        result.decoded.append(steps)
    return result


def score_output(worker: BackendWorker, entry: BfclEntry, decoded: Decoded | None) -> Verdict:
    if decoded is None:
        return Verdict(
            False, "multi_turn:inference_error", "Model did not output a list of model responses."
        )
    if len(decoded) != len(entry.ground_truth):
        return Verdict(
            False,
            "multi_turn:force_terminated",
            f"Model was force-terminated during inference phase. The length of the "
            f"model result turns ({len(decoded)}) does not match the length of the "
            f"ground truth turns ({len(entry.ground_truth)}).",
        )
    reply = score_in_worker(worker, entry, decoded)
    return Verdict(
        reply["valid"],
        reply.get("error_type"),
        reply.get("error_message"),
        reply.get("turn"),
        reply.get("refused", []),
    )
