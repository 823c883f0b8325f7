"""ACEBench's call format: the model writes `[ApiName(key1='value1', key2=2), ...]`.

Parsed with `ast` and `ast.literal_eval` only (nothing is evaluated): a call is a plain name
with keyword arguments whose values are Python literals. Upstream also evaluated arithmetic
in arguments and silently dropped positional ones; here both make the output malformed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any


class CallSyntaxError(ValueError):
    """The text is not a list of calls in ACEBench's format; the message says why."""


@dataclass(frozen=True)
class Call:
    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in self.args.items())})"


def parse_calls(text: str) -> list[Call]:
    """The calls in `text` (one bracketed list, or a bare call); raises CallSyntaxError."""
    body = text.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1].strip()
    if not body:
        raise CallSyntaxError("no call found")
    try:
        tree = ast.parse(body, mode="eval").body
    except SyntaxError as exc:
        raise CallSyntaxError(f"not Python call syntax ({exc.msg})") from None
    nodes = tree.elts if isinstance(tree, ast.Tuple | ast.List) else [tree]
    return [_call(node) for node in nodes]


def _call(node: ast.expr) -> Call:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise CallSyntaxError(f"{ast.unparse(node)[:80]!r} is not a call of an API by name")
    name = node.func.id
    if node.args:
        raise CallSyntaxError(f"{name}: arguments must be given by keyword (key='value')")
    args: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise CallSyntaxError(f"{name}: **kwargs is not allowed")
        try:
            args[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise CallSyntaxError(
                f"{name}: {keyword.arg}={ast.unparse(keyword.value)[:80]} is not a literal value"
            ) from None
    return Call(name, args)
