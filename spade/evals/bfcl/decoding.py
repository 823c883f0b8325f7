"""Prompting mode: a model reply such as `[cd(folder='document'), ls(a=True)]` to call strings.

A port of bfcl-eval's `default_decode_execute_prompting` (`ast_parse` +
`decoded_output_to_execution_list`), quirks included, because the checker's verdicts depend
on exactly which strings get executed: positional arguments are dropped, any unary operator
negates, a bare name becomes a string, a dict whose values are all dicts is written as a
call. One change: BFCL evaluates a binary operation in an argument (`a=1+2`) with `eval`;
here only arithmetic on literals is evaluated, with size limits, since a reply is untrusted
text. Anything else that BFCL's `eval` would accept there fails to decode (a turn ends).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any


class DecodeError(ValueError):
    """The reply holds no decodable list of calls (for BFCL: the turn is over)."""


def decode_prompting(text: str) -> list[str]:
    """The call strings in a prompting-mode reply; `[]` when it lists no calls.

    Raises `DecodeError` when the reply is not a Python list of calls.
    """
    text = text.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    try:
        return [_call_string(call) for call in _parse(text)]
    except DecodeError:
        raise
    except Exception as exc:  # BFCL catches everything here: any failure ends the turn
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None


def _parse(text: str) -> list[dict[str, dict[str, Any]]]:
    parsed = ast.parse(text.strip().strip("'"), mode="eval")
    if isinstance(parsed.body, ast.Call):
        return [_resolve_call(parsed.body)]
    elements = getattr(parsed.body, "elts", None)
    if elements is None:
        raise DecodeError(f"expected a list of calls, got {type(parsed.body).__name__}")
    calls = []
    for element in elements:
        if not isinstance(element, ast.Call):
            raise DecodeError(f"expected a call, got {ast.unparse(element)[:80]!r}")
        calls.append(_resolve_call(element))
    return calls


def _resolve_call(call: ast.Call) -> dict[str, dict[str, Any]]:
    parts = []
    func: ast.expr = call.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    name = ".".join(reversed(parts))
    # Only keyword arguments count (BFCL ignores positional ones).
    return {name: {keyword.arg: _resolve_value(keyword.value) for keyword in call.keywords}}  # type: ignore[misc]


def _resolve_value(node: ast.expr | None) -> Any:
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        # BFCL negates the operand's value whatever the operator is.
        if not isinstance(node.operand, ast.Constant):
            raise DecodeError(f"unsupported unary operand {ast.unparse(node)[:80]!r}")
        value: Any = node.operand.value  # a str or None raises TypeError: a decode failure
        return -value
    if isinstance(node, ast.List):
        return [_resolve_value(v) for v in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _resolve_value(k): _resolve_value(v)
            for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.BinOp):
        return _arithmetic(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _resolve_call(node) if node.keywords else ast.unparse(node)
    if isinstance(node, ast.Tuple):
        return tuple(_resolve_value(v) for v in node.elts)
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    raise DecodeError(f"unsupported AST type: {type(node).__name__}")


_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_MAX_EXPONENT = 4096
_MAX_ITEMS = 100_000


def _arithmetic(node: ast.expr) -> Any:
    """Evaluate arithmetic on literals, as BFCL's `eval` would, but nothing else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | complex | str):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _arithmetic(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.List | ast.Tuple):
        items = [_arithmetic(v) for v in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        _check_size(node.op, left, right)
        return _OPERATORS[type(node.op)](left, right)
    raise DecodeError(f"not evaluated (only arithmetic on literals is): {ast.unparse(node)[:80]!r}")


def _check_size(op: ast.operator, left: Any, right: Any) -> None:
    # A reply must not be able to make decoding hang or exhaust memory.
    if isinstance(op, ast.Pow) and isinstance(right, int | float) and abs(right) > _MAX_EXPONENT:
        raise DecodeError(f"exponent {right} is too large to evaluate")
    if isinstance(op, ast.Mod) and isinstance(left, str):
        raise DecodeError("string formatting is not evaluated")  # "%999999999d" % 1
    if isinstance(op, ast.Mult):
        for sequence, count in ((left, right), (right, left)):
            repeated = isinstance(sequence, str | list | tuple) and isinstance(count, int)
            if repeated and len(sequence) * count > _MAX_ITEMS:
                raise DecodeError("repeated sequence is too long to evaluate")


def _call_string(call: dict[str, dict[str, Any]]) -> str:
    """`decoded_output_to_execution_list` for one call."""
    ((name, arguments),) = call.items()
    return f"{name}({', '.join(f'{k}={_value_string(v)}' for k, v in arguments.items())})"


def _value_string(value: Any) -> str:
    """`parse_nested_value`: a dict of dicts is written as a call, other dicts as literals."""
    if isinstance(value, dict):
        if all(isinstance(v, dict) for v in value.values()):
            name = list(value)[0]  # an empty dict fails here (IndexError), as in BFCL
            inner = ", ".join(f"{k}={_value_string(v)}" for k, v in value[name].items())
            return f"{name}({inner})"
        return "{" + ", ".join(f"'{k}': {_value_string(v)}" for k, v in value.items()) + "}"
    return repr(value)
