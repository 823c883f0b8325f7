"""Code extraction and sanitising on the answer shapes models actually produce."""

from __future__ import annotations

import ast

from spade.evals.code_extract import extract_solution, fenced_blocks, parseable_prefix, sanitise
from spade.sandbox.programs import run_program

PROMPT = '''from typing import List


def below_zero(operations: List[int]) -> bool:
    """ Whether the running balance ever drops below zero.
    >>> below_zero([1, 2, -4])
    True
    """
'''
FUNCTION = """def below_zero(operations):
    balance = 0
    for op in operations:
        balance += op
        if balance < 0:
            return True
    return False
"""
BODY = FUNCTION.split("\n", 1)[1]  # the indented body only


def runs_correctly(solution: str | None) -> bool:
    """Whether the extracted code behaves (run in the sandbox, like every solution)."""
    assert solution is not None
    tests = "assert below_zero([1, 2, -4]) is True\nassert below_zero([1, 2]) is False\n"
    return run_program(solution + "\n" + tests, timeout_s=10).passed


def test_one_fenced_block_among_prose() -> None:
    answer = f"Sure! Here is the function:\n\n```python\n{FUNCTION}```\n\nIt walks the list."
    assert extract_solution(answer, "below_zero") == FUNCTION


def test_solution_block_then_usage_block() -> None:
    usage = "print(below_zero([1, 2, -4]))\n"
    answer = f"```python\n{FUNCTION}```\nExample:\n```python\n{usage}```"
    assert extract_solution(answer, "below_zero") == FUNCTION


def test_the_last_block_defining_the_function_wins() -> None:
    draft = "def below_zero(operations):\n    return False\n"
    answer = f"First try:\n```python\n{draft}```\nFixed:\n```py\n{FUNCTION}```"
    assert extract_solution(answer, "below_zero") == FUNCTION


def test_blocks_in_other_languages_are_ignored() -> None:
    answer = f"```bash\npython solve.py\n```\n```\n{FUNCTION}```"
    assert fenced_blocks(answer) == [FUNCTION]
    assert extract_solution(answer, "below_zero") == FUNCTION


def test_truncated_answer_keeps_its_complete_functions() -> None:
    answer = f"```python\n{FUNCTION}\ndef helper(x):\n    return [x for x in"  # cut off
    assert extract_solution(answer, "below_zero") == FUNCTION


def test_raw_code_and_code_after_prose_without_fences() -> None:
    assert extract_solution(FUNCTION, "below_zero") == FUNCTION
    assert extract_solution("Here you go:\n" + FUNCTION, "below_zero") == FUNCTION


def test_indented_block_is_dedented() -> None:
    answer = "1. The code:\n   ```python\n" + FUNCTION.replace("\n", "\n   ").rstrip() + "\n   ```"
    assert runs_correctly(extract_solution(answer, "below_zero"))


def test_body_only_answers_are_completed_with_the_prompt() -> None:
    for body in (
        BODY,  # as a base model continues the prompt
        BODY.lstrip(),  # first line's indent lost
        "\n".join(line[4:] for line in BODY.splitlines()),  # whole body dedented
        f"```python\n{BODY}```",
    ):
        solution = extract_solution(body, "below_zero", prompt=PROMPT)
        assert solution is not None and solution.startswith("from typing import List")
        assert runs_correctly(solution), body


def test_sanitiser_drops_example_calls_asserts_and_main_blocks() -> None:
    noisy = (
        "import math\n"
        "from collections import deque\n\n"
        "LIMIT = 10\n\n"
        "def _step(x):\n    return x + LIMIT\n\n"
        "def below_zero(operations):\n    return _step(0) < 0\n\n"
        "def unrelated():\n    pass\n\n"
        "print(below_zero([1]))\n"
        "assert below_zero([]) is True  # the model's own (wrong) test\n"
        "x = input()\n"
        "if __name__ == '__main__':\n    import doctest\n    doctest.testmod()\n"
    )
    kept = sanitise(noisy, "below_zero")
    names = [type(n).__name__ + ":" + getattr(n, "name", "") for n in ast.parse(kept).body]
    assert names == ["Import:", "ImportFrom:", "Assign:", "FunctionDef:_step",
                     "FunctionDef:below_zero"]  # fmt: skip
    assert "print" not in kept and "input" not in kept and "__main__" not in kept


def test_sanitiser_keeps_what_the_tests_use() -> None:
    code = "def helper():\n    return 1\n\ndef f():\n    return 2\n"
    assert "helper" not in sanitise(code, "f")
    assert "def helper" in sanitise(code, "f", test_code="assert f() + helper() == 3")


def test_decorated_and_import_fallback_code_is_kept_whole() -> None:
    code = (
        "try:\n    from math import gcd\nexcept ImportError:\n    from fractions import gcd\n\n"
        "import functools\n\n@functools.cache\ndef f(n):\n    return gcd(n, 6)\n"
    )
    assert sanitise(code, "f") == code


def test_nothing_to_extract_is_none() -> None:
    assert extract_solution("", "below_zero") is None
    assert extract_solution("I am not able to help with that.", "below_zero") is None
    assert extract_solution("```python\ndef other():\n    pass\n```", "below_zero") is None
    # The prompt's docstring stub alone must not count as an answer.
    assert extract_solution("", "below_zero", prompt=PROMPT) is None
    assert extract_solution("Sorry, no idea.", "below_zero", prompt=PROMPT) is None


def test_parseable_prefix() -> None:
    assert parseable_prefix("x = 1\ny = (") == "x = 1\n"
    assert parseable_prefix("  x = 1\n  y = 2\n") == "x = 1\ny = 2\n"
    assert parseable_prefix("((((") is None
    assert parseable_prefix("   \n") is None
