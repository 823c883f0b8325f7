"""Which call strings may reach bfcl-eval's executor, which runs them with `eval`.

BFCL prefixes each known method name with its backend instance and `eval`s the string in
its `multi_turn_utils` module. A model reply or a predictions file could therefore call
`open(...)`, `__import__(...)` or any global of that module, or compute `9**9**9`. A call
string is let through when `eval` could only call backend methods or fail harmlessly:
- it does not parse (then `eval` raises the same SyntaxError; nothing runs), or
- it is one call whose function, and every nested call's function, is a plain name that
  is a backend method or that `eval` cannot resolve (then it raises BFCL's usual
  "name 'x' is not defined"), with arguments made only of literals, containers, names
  `eval` cannot resolve, a unary sign on a literal, and complex literals (`1+2j`).
Everything our decoders emit and all 4,625 ground-truth calls pass. Refused calls are
answered with an error result instead (see `backends.py`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

_ALLOWED_NODES = (
    ast.Expression,
    ast.Call,
    ast.keyword,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.Load,
    ast.USub,
    ast.UAdd,
    ast.Add,
    ast.Sub,
)


def refusal(
    call: str, is_method: Callable[[str], bool], resolvable: Callable[[str], bool]
) -> str | None:
    """Why `call` must not be evaluated, or None when it may be.

    `is_method(name)`: a public method of one of the entry's backend instances.
    `resolvable(name)`: a name `eval` would find (a builtin or a global of BFCL's module).
    """
    try:
        tree = ast.parse(call, filename="<string>", mode="eval")
    except (SyntaxError, ValueError):
        return None
    if not isinstance(tree.body, ast.Call):
        return "it is not a function call"
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                return f"only plain function names can be called, not {ast.unparse(node.func)!r}"
        elif isinstance(node, ast.Name):
            if id(node) in called and is_method(node.id):
                continue
            if resolvable(node.id):
                return f"{node.id!r} is not one of the available functions"
        elif isinstance(node, ast.UnaryOp):
            if not _number(node):
                return f"{ast.unparse(node)!r} is not a literal"
        elif isinstance(node, ast.BinOp):
            # Only a complex literal's shape: repr(1-2j) == '(1-2j)'.
            imaginary = isinstance(node.right, ast.Constant) and isinstance(
                node.right.value, complex
            )
            if not (isinstance(node.op, ast.Add | ast.Sub) and _number(node.left) and imaginary):
                return f"{ast.unparse(node)!r} is not a literal"
        elif isinstance(node, ast.Dict):
            if any(key is None for key in node.keys):
                return "dict unpacking (**) is not a literal"
        elif not isinstance(node, _ALLOWED_NODES):
            return f"{type(node).__name__} is not allowed in a call"
    return None


def _number(node: ast.expr) -> bool:
    """A numeric literal, optionally signed."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float | complex)
