"""Source fingerprints for duplicate detection.

Two env sources that differ only in comments, docstrings or formatting are the same env to a
player, so freeze keeps one of them. The normal form is `ast.unparse` of the parsed module with
docstrings removed: the parser already drops comments, and unparsing fixes the layout.
"""

from __future__ import annotations

import ast
import hashlib

_DOCSTRING_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_DocstringOwner = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def normalised_source(source: str) -> str:
    """The source without comments, docstrings and formatting; raises SyntaxError."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, _DOCSTRING_OWNERS) and _has_docstring(node):
            node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def normalised_sha256(source: str) -> str:
    return sha256_hex(normalised_source(source).encode("utf-8"))


def _has_docstring(node: _DocstringOwner) -> bool:
    first = node.body[0] if node.body else None
    return (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
