"""spade's BFCL pieces against bfcl-eval's own functions, on the real data.

- verdicts: the runner's per-entry verdicts (its worker in the sandbox) equal bfcl-eval's
  `multi_turn_checker` run in this process the way its `_evaluate_single_multi_turn_entry`
  runs it, on the 800 ground-truth predictions and on 800 perturbed ones;
- entries, the system prompt and the tool schemas equal `load_dataset_entry`,
  `formulate_system_prompt` and `convert_to_tool`;
- the decoders equal `default_decode_execute_prompting` and the function-calling handlers'
  `convert_to_function_call`, on every ground-truth call and a list of odd replies.
bfcl-eval's `model_handler.utils` imports tree-sitter (its Java/JavaScript parsers), so
these tests need `tree-sitter==0.21.3 tree-sitter-java==0.21.0 tree-sitter-javascript==0.21.4
tenacity` besides bfcl-eval.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import json
import random
import re
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("bfcl_eval", reason="needs bfcl-eval (pip install --no-deps bfcl-eval mpmath)")
pytest.importorskip("tree_sitter", reason="bfcl-eval's model_handler.utils needs tree-sitter")

from bfcl_eval.constants.default_prompts import DEFAULT_SYSTEM_PROMPT_FORMAT  # noqa: E402
from bfcl_eval.constants.enums import ModelStyle  # noqa: E402
from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import (  # noqa: E402
    multi_turn_checker,
)
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import (  # noqa: E402
    is_empty_execute_response,
)

from spade.evals.bfcl import prompts  # noqa: E402
from spade.evals.bfcl.backends import drop  # noqa: E402
from spade.evals.bfcl.call_guard import refusal  # noqa: E402
from spade.evals.bfcl.data import CATEGORIES, BfclEntry  # noqa: E402
from spade.evals.bfcl.decoding import DecodeError, decode_prompting  # noqa: E402
from spade.evals.bfcl.tool_calls import extract_tool_calls  # noqa: E402
from tests.evals.bfcl_helpers import entries, gold  # noqa: E402
from tests.evals.test_bfcl_runner import score_saved  # noqa: E402


@pytest.fixture(scope="module")
def bfcl_utils(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """bfcl_eval.utils and model_handler.utils; importing them creates folders under
    BFCL_PROJECT_ROOT, so that points at a temporary directory."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BFCL_PROJECT_ROOT", str(tmp_path_factory.mktemp("bfcl-root")))
        import bfcl_eval.model_handler.utils as handler_utils

        yield handler_utils


# -- verdicts -------------------------------------------------------------------------------
def bfcl_verdict(entry: BfclEntry, output: Any, model_name: str) -> tuple[bool, str | None]:
    """`_evaluate_single_multi_turn_entry` for already-decoded steps (its decoding step is
    `decode_execute`, compared separately below)."""
    if type(output) is not list:
        return False, "multi_turn:inference_error"
    if len(output) != len(entry.ground_truth):
        return False, "multi_turn:force_terminated"
    decoded = [[step for step in turn if not is_empty_execute_response(step)] for turn in output]
    test_entry = {"id": entry.id, "initial_config": entry.initial_config,
                  "involved_classes": entry.involved_classes}  # fmt: skip
    try:
        result = multi_turn_checker(decoded, entry.ground_truth, test_entry,
                                    entry.id.rsplit("_", 1)[0], model_name)  # fmt: skip
    finally:
        drop(model_name)
    return result["valid"], result.get("error_type")


PERTURBATIONS = ["gold", "one_call_per_step", "drop_call", "change_argument", "call_early",
                 "duplicate_call", "unknown_function", "wrong_type", "empty_turn",
                 "drop_last_turn", "all_empty", "open_a_file", "extra_state_change"]  # fmt: skip


def perturb(entry: BfclEntry, kind: str, rng: random.Random) -> list[list[list[str]]]:
    output = [[list(turn)] if turn else [] for turn in entry.ground_truth]
    filled = [i for i, turn in enumerate(entry.ground_truth) if turn]
    turn = rng.choice(filled)
    calls = output[turn][0]
    index = rng.randrange(len(calls))
    if kind == "one_call_per_step":
        output = [[[c] for c in t] for t in entry.ground_truth]
    elif kind == "drop_call":
        del calls[index]
    elif kind == "change_argument":
        calls[index] = calls[index].replace("'", "'x", 1) if "'" in calls[index] else "pwd()"
    elif kind == "call_early" and turn > 0:
        output[turn - 1].append(output[turn].pop())
    elif kind == "duplicate_call":
        calls.insert(index, calls[index])
    elif kind == "unknown_function":
        output[turn].append(["no_such_function(x=1)"])
    elif kind == "wrong_type":
        output[turn].insert(0, [calls[index].split("(")[0] + "(5, 6, 7, 8)"])
    elif kind == "empty_turn":
        output[turn] = []
    elif kind == "drop_last_turn":
        output = output[:-1]
    elif kind == "all_empty":
        output = [[] for _ in output]
    elif kind == "open_a_file":
        output[turn].append(["open(file='no such file for spade tests')"])
    elif kind == "extra_state_change":
        output[turn].append(["mkdir(dir_name='spade_extra')", "fillFuelTank(fuelAmount=1)"])
    return output


def test_verdicts_equal_bfcl_checker_on_the_ground_truth() -> None:
    table = entries()
    outputs: dict[str, Any] = {i: gold(e) for i, e in table.items()}
    ours = {r.sample_id: (r.extra["valid"], r.extra["error_type"]) for r in score_saved(outputs)}
    theirs = {i: bfcl_verdict(table[i], copy.deepcopy(o), f"reference{n}")
              for n, (i, o) in enumerate(outputs.items())}  # fmt: skip
    assert ours == theirs
    assert len(ours) == 800 and all(valid for valid, _ in ours.values())


def test_verdicts_equal_bfcl_checker_on_perturbed_predictions() -> None:
    rng = random.Random(2026)
    table = entries()
    outputs: dict[str, Any] = {i: perturb(e, PERTURBATIONS[n % len(PERTURBATIONS)], rng)
                               for n, (i, e) in enumerate(table.items())}  # fmt: skip
    ours = {r.sample_id: (r.extra["valid"], r.extra["error_type"]) for r in score_saved(outputs)}
    theirs = {i: bfcl_verdict(table[i], copy.deepcopy(o), f"reference{n}")
              for n, (i, o) in enumerate(outputs.items())}  # fmt: skip
    assert ours == theirs
    passed = sum(valid for valid, _ in ours.values())
    assert 100 < passed < 700  # the perturbations do fail some entries and not others


# -- data and prompts -----------------------------------------------------------------------
def test_entries_prompts_and_tools_equal_bfcl(bfcl_utils: ModuleType) -> None:
    import bfcl_eval.utils as utils  # after the fixture: BFCL_PROJECT_ROOT is set

    table = entries()
    for category in CATEGORIES:
        for position, raw in enumerate(utils.load_dataset_entry(f"multi_turn_{category}")):
            entry = table[raw["id"]]
            assert entry.functions == raw["function"]
            missed = {str(turn): docs for turn, docs in entry.missed_functions.items()}
            assert missed == raw.get("missed_function", {})
            assert entry.question == raw["question"]
            assert entry.initial_config == raw["initial_config"]
            if position % 8:
                continue  # prompts and tools depend only on the docs, checked above for all
            expected = bfcl_utils.formulate_system_prompt(
                DEFAULT_SYSTEM_PROMPT_FORMAT, raw["function"]
            )
            assert prompts.system_prompt(entry.functions) == expected
            first = bfcl_utils.system_prompt_pre_processing_chat_model(
                json.loads(json.dumps(raw["question"][0])), raw["function"], raw["id"]
            )
            assert prompts.first_turn_messages(entry.question[0], entry.functions) == first
            tools = bfcl_utils.convert_to_tool(raw["function"], GORILLA_TO_OPENAPI,
                                               ModelStyle.OPENAI_COMPLETIONS)  # fmt: skip
            assert prompts.tool_schemas(entry.functions) == tools


# -- decoding ---------------------------------------------------------------------------------
ODD_REPLIES = [
    "", "[]", "Done.", "I have done it", "```python\n[ls(a=True)]\n```", "[ls(a=True)] and more",
    "cd('x')", "[cd(folder=-5)]", "[cd(folder=+5)]", "[cd(folder=not 5)]", "[f(a=1+2)]",
    "[f(a=2**10)]", "[f(a='x'*3)]", "[f(a=[1,2]*2)]", "[f(a={'b': {'c': 1}})]", "[f(a={})]",
    "[f(a={'k': 1, 'j': [1, 2]})]", "[f(a=x)]", "[f(a=x.y)]", "[f(a=x[0])]", "[f(a=g(1))]",
    "[f(a=g(b=1))]", "[f(a=(1, 2))]", "[f(a={1, 2})]", "[f(a=f'x')]", "[f(a=lambda: 1)]",
    "[f(a=...)]", "[f(a=None, b=True)]", "[a.b.c(d=1)]", "[a().b(x=1)]", "(f(a=1), g(b=2))",
    "f(a=1), g(b=2)", "'[f(a=1)]'", "[f(a=-x)]", "[f(a=-'s')]", "[f(a=-True)]", "[f(a=1e400)]",
    "[f(**{'a': 1})]", "[f(a={**x})]", "[f(a=1j)]", "[f(a=1+2j)]", "[f(a=[1,[2,{'x': 3}]])]",
    "[f(a=\"it's\")]", "[f(a='\\n')]", "[f(x=1)(y=2)]", "[[f(a=1)]]", "[f(a=1), 3]",
    "[f(a=b'x')]", "\n[f(a=1)]\n", "`[f(a=1)]`", "[f(a=1)]]", "[f(a=1, b=2,)]", "[f(a=-(1))]",
    "[f(a=-(-1))]", "[f(a=1 if x else 2)]", "[f(a=[i for i in x])]", "[f(a=1 < 2)]",
    "[f(a=True and False)]", "[f(a=3 % 2)]", "[f(a=7 // 2)]", "[f(a=7 / 2)]", "[f(a=2 ** -1)]",
    "[f(a=1 - 1.5)]", "[f(a=None + 1)]", "[f(a={'x': {'y': 1}, 'z': {}})]", "[f(a={'x': {}})]",
    "[f(a={1: 2})]", "[f(a={(1,2): 3})]",
]  # fmt: skip


def replies() -> list[str]:
    texts = list(ODD_REPLIES)
    for entry in entries().values():
        for turn in entry.ground_truth:
            if turn:
                texts += ["[" + ", ".join(turn) + "]", turn[0]]
    return texts


def test_prompting_decoder_equals_bfcl(bfcl_utils: ModuleType) -> None:
    def theirs(text: str) -> list[str] | None:
        try:
            return list(bfcl_utils.default_decode_execute_prompting(text))
        except Exception:
            return None

    def ours(text: str) -> list[str] | None:
        try:
            return decode_prompting(text)
        except DecodeError:
            return None

    differ = [text for text in replies() if ours(text) != theirs(text)]
    assert differ == []


def test_prompting_decoder_evaluates_only_arithmetic_on_literals() -> None:
    assert decode_prompting("[f(a=2**10, b='ab'*2)]") == ["f(a=1024, b='abab')"]
    for text in ["[f(a=9**9**9)]", "[f(a=__import__('os').getpid() + 1)]", "[f(a='%9999999d' % 1)]",
                 "[f(a='x' * 10**9)]"]:  # fmt: skip
        with pytest.raises(DecodeError):
            decode_prompting(text)


def qwen_extract_tool_calls(text: str) -> list[Any]:
    """`QwenFCHandler._extract_tool_calls` (its module needs `overrides` and an OpenAI client)."""
    found = []
    for match in re.findall(r"<tool_call>\n(.*?)\n</tool_call>", text, re.DOTALL):
        with contextlib.suppress(json.JSONDecodeError):
            found.append(json.loads(match))
    return found


def test_function_calling_decoder_equals_bfcl(bfcl_utils: ModuleType) -> None:
    for entry in list(entries().values())[::7]:
        for turn in entry.ground_truth:
            calls = [{"name": f"fn{i}", "arguments": {"a": i, "b": [1, "x"], "c": {"d": None}}}
                     for i, _ in enumerate(turn)]  # fmt: skip
            text = "\n".join(f"<tool_call>\n{json.dumps(c)}\n</tool_call>" for c in calls)
            expected = bfcl_utils.convert_to_function_call(
                [{c["name"]: c["arguments"]} for c in qwen_extract_tool_calls(text)]
            )
            assert [c.call_string() for c in extract_tool_calls(text)] == expected


def test_function_calling_decoder_reads_other_native_formats() -> None:
    expected = ["ls(a=True)", "cd(folder='x')"]
    ls = {"name": "ls", "arguments": {"a": True}}
    cd = {"name": "cd", "arguments": {"folder": "x"}}
    llama = [{"name": c["name"], "parameters": c["arguments"]} for c in (ls, cd)]
    formats = [
        "[TOOL_CALLS] " + json.dumps([ls, cd]),  # Mistral
        "<|python_tag|>" + "\n".join(json.dumps(c) for c in llama),  # Llama 3.x
        # prose, then calls with their arguments as a JSON string (OpenAI's wire format)
        "Sure.\n"
        + json.dumps(ls)
        + "\n"
        + json.dumps({**cd, "arguments": json.dumps(cd["arguments"])}),
    ]
    for text in formats:
        assert [c.call_string() for c in extract_tool_calls(text)] == expected
    assert extract_tool_calls("No calls needed, the file is there.") == []
    with pytest.raises(DecodeError):
        extract_tool_calls('<tool_call>\n{"name": "ls", \n</tool_call>')


# -- the call guard -----------------------------------------------------------------------------
def test_guard_lets_every_ground_truth_call_through_and_stops_code() -> None:
    methods = {c.split("(")[0] for e in entries().values() for t in e.ground_truth for c in t}
    resolvable = set(dir(builtins)) | {"importlib", "json", "re"}  # as in BFCL's module
    for entry in entries().values():
        for turn in entry.ground_truth:
            for call in turn:
                assert refusal(call, methods.__contains__, resolvable.__contains__) is None, call
    for call in ["open(file='x')", "importlib.import_module(name='os')", "ls(a=__import__)",
                 "ls(a=(1).real)", "ls(a=[x for x in y])", "ls(a=9**9**9)", "'a result'",
                 "ls(**{'a': open})", "ls(a=lambda: 0)", "ls(a=globals())",
                 "ls(a={**globals()})"]:  # fmt: skip
        assert refusal(call, methods.__contains__, resolvable.__contains__), call
    for call in ["no_such_function(x=1)", "ls(a=-1.5, b=(1-2j), c={'k': [None, True]})", "ls(a=b"]:
        assert refusal(call, methods.__contains__, resolvable.__contains__) is None, call
