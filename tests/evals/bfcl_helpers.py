"""Shared pieces of the BFCL runner tests: the declarations, the data, and an oracle model.

The oracle is a plain function over `GenRequest`s (our responder seam): at the start of a
turn it answers with that turn's ground-truth calls, after the calls' results it answers
with text (which ends the turn), as a perfect model would.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
from functools import cache
from typing import Any

from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

from spade.evals.bfcl.data import BfclEntry
from spade.evals.bfcl.runner import BfclBenchmark
from spade.evals.declarations import Declaration, declarations
from spade.rollout import GenRequest
from tests.replies import text_responder

UMBRELLA = "bfcl_v4_multi_turn"


def declaration(name: str = UMBRELLA, **options: Any) -> Declaration:
    found = declarations()[name]
    return found.model_copy(update={"options": {**found.options, **options}})


@cache
def benchmark() -> BfclBenchmark:
    return BfclBenchmark(declaration())


def entries() -> dict[str, BfclEntry]:
    return benchmark().entries(None)


def gold(entry: BfclEntry) -> list[list[list[str]]]:
    """The ground truth in the predictions format: each turn's calls as one step."""
    return [[turn] if turn else [] for turn in entry.ground_truth]


@cache
def _parameters(class_name: str, method: str) -> list[str] | None:
    module = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
    function = getattr(getattr(module, class_name), method, None)
    if function is None:
        return None
    return [p for p in inspect.signature(function).parameters if p != "self"]


def keyword_call(call: str, classes: list[str]) -> tuple[str, dict[str, Any]]:
    """A ground-truth call as (name, keyword arguments); some are written positionally, which
    BFCL's decoder (and ours) drops, so a model must name them."""
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    arguments = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    if node.args:
        names = next(p for c in classes if (p := _parameters(c, node.func.id)) is not None)
        arguments.update({n: ast.literal_eval(a) for n, a in zip(names, node.args, strict=False)})
    return node.func.id, arguments


def oracle(mode: str = "prompting"):  # noqa: ANN201 — a Responder
    table = entries()

    @text_responder
    def respond(requests: list[GenRequest]) -> list[list[str]]:
        replies = []
        for request in requests:
            entry = table[request.sample_id]
            turn = sum(m["role"] == "user" for m in request.messages) - 1
            truth = entry.ground_truth[turn]
            if request.messages[-1]["role"] != "user" or not truth:
                replies.append(["I have done what was asked."])
                continue
            calls = [keyword_call(c, entry.involved_classes) for c in truth]
            if mode == "prompting":
                text = ", ".join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})"
                                 for n, a in calls)  # fmt: skip
                replies.append([f"[{text}]"])
            else:
                replies.append(["\n".join(
                    f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>"
                    for n, a in calls
                )])  # fmt: skip
        return replies

    return respond
