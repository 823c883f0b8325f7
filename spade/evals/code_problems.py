"""HumanEval and MBPP problems: loading, the chat prompt, and the test program.

A `CodeProblem` knows everything dataset-specific: the prompt the model sees, the entry
point, and how a solution becomes a program that exits 0 only when every test passes.
"""

from __future__ import annotations

import ast
import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spade.evals.code_extract import extract_solution, parse_quietly
from spade.models.policy import Message

HUMANEVAL_INSTRUCTION = (
    "Complete the following Python function. Reply with the complete function (signature "
    "and body) and any imports or helpers it needs, in a single ```python code block.\n\n"
    "```python\n{prompt}```"
)
# lm-eval's mbpp_instruct(_sanitized) wording; the last line replaces its assistant prefill
# ("```python"), which a chat request cannot carry.
MBPP_INSTRUCTION = (
    "You are an expert Python programmer, and here is your task:\n{text}\n"
    "Your code should pass these tests:\n{tests}\n"
    "Write your code in a single ```python code block."
)
# The MBPP paper's three prompt examples (the `prompt` split of the sanitized set).
MBPP_FEWSHOT_IDS = ("2", "3", "4")
# The test split of MBPP (google-research's README): sanitized keeps its own subset of these.
MBPP_TEST_IDS = range(11, 511)


@dataclass(frozen=True)
class CodeProblem:
    sample_id: str
    messages: tuple[Message, ...]
    entry_point: str
    tests: str
    """The test code run after the solution (for HumanEval ending in `check(entry_point)`)."""
    prompt_code: str | None = None
    """HumanEval's signature and docstring: completes body-only answers."""
    context: str = ""
    """Code put before every solution: the prompt's imports and helpers (HumanEval),
    `test_imports` (MBPP)."""
    reference: str = ""
    """The dataset's own solution, as a complete solution (tests run the canonical ones)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def solution(self, output: str) -> str | None:
        """The solution code in a model output, or None when none could be extracted."""
        return extract_solution(output, self.entry_point, self.prompt_code, self.tests)

    def program(self, solution: str) -> str:
        """The program the sandbox runs: exit status 0 only when every test passed."""
        return f"{self.context}\n\n{solution}\n\n{self.tests}\n"


# -- HumanEval -------------------------------------------------------------------------------
def humaneval_problem(row: dict[str, Any]) -> CodeProblem:
    prompt, entry_point = row["prompt"], row["entry_point"]
    message = {"role": "user", "content": HUMANEVAL_INSTRUCTION.format(prompt=prompt)}
    return CodeProblem(
        sample_id=row["task_id"],
        messages=(message,),
        entry_point=entry_point,
        tests=f"{row['test']}\n\ncheck({entry_point})",
        prompt_code=prompt,
        context=_prompt_context(prompt, entry_point),
        reference=prompt + row["canonical_solution"],
    )


def _prompt_context(prompt: str, entry_point: str) -> str:
    """The prompt without the entry point's stub: imports and helpers the problem gives
    (e.g. `poly` for HumanEval/32, used by its tests), so a solution need not repeat them."""
    tree = parse_quietly(prompt)
    lines = prompt.splitlines()
    kept = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            continue
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        kept.append("\n".join(lines[first - 1 : node.end_lineno]))
    return "\n".join(kept)


def load_humaneval(path: Path) -> list[CodeProblem]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [humaneval_problem(json.loads(line)) for line in handle if line.strip()]


# -- MBPP ------------------------------------------------------------------------------------
def mbpp_problem(row: dict[str, Any], shots: list[dict[str, Any]]) -> CodeProblem:
    messages: list[Message] = []
    for shot in shots:
        messages.append({"role": "user", "content": _mbpp_instruction(shot)})
        messages.append({"role": "assistant", "content": f"```python\n{shot['code']}\n```"})
    messages.append({"role": "user", "content": _mbpp_instruction(row)})
    return CodeProblem(
        sample_id=str(row["task_id"]),
        messages=tuple(messages),
        entry_point=mbpp_entry_point(row),
        tests="\n".join(row["test_list"]),
        context="\n".join(row.get("test_imports") or []),
        reference=row["code"],
    )


def _mbpp_instruction(row: dict[str, Any]) -> str:
    text = row.get("prompt") or row.get("text") or ""
    return MBPP_INSTRUCTION.format(text=text.strip(), tests="\n".join(row["test_list"]))


def mbpp_entry_point(row: dict[str, Any]) -> str:
    """The function the tests call that the reference solution defines (MBPP has no field)."""
    defined = {
        node.name
        for node in ast.walk(parse_quietly(row["code"]))
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    for test in row["test_list"]:
        for node in ast.walk(parse_quietly(test)):
            called = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            if called and node.func.id in defined:  # type: ignore[attr-defined]
                return node.func.id  # type: ignore[attr-defined]
    raise ValueError(f"MBPP task {row['task_id']}: no tested function in its reference code")


def mbpp_problems(rows: list[dict[str, Any]], num_fewshot: int) -> list[CodeProblem]:
    """The test-split problems, prompted with `num_fewshot` of the paper's examples."""
    by_id = {str(r["task_id"]): r for r in rows}
    shots = [by_id[i] for i in MBPP_FEWSHOT_IDS[:num_fewshot] if i in by_id]
    if len(shots) < min(num_fewshot, len(MBPP_FEWSHOT_IDS)):
        raise ValueError("MBPP data lacks the few-shot examples (task_ids 2, 3, 4)")
    return [mbpp_problem(r, shots) for r in rows if int(r["task_id"]) in MBPP_TEST_IDS]


def load_mbpp(path: Path, num_fewshot: int) -> list[CodeProblem]:
    """MBPP from google-research's `sanitized-mbpp.json` (a JSON array) or a JSONL file."""
    text = path.read_text(encoding="utf-8")
    rows = (
        json.loads(text)
        if text.lstrip().startswith("[")
        else [json.loads(line) for line in text.splitlines() if line.strip()]
    )
    return mbpp_problems(rows, num_fewshot)


LOADERS: dict[str, Callable[..., list[CodeProblem]]] = {
    "humaneval": lambda path, num_fewshot: load_humaneval(path),
    "mbpp": load_mbpp,
}
