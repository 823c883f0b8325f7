"""Turn a model's answer into the solution code a code benchmark runs.

Models answer in many shapes: one fenced block, several (solution, then example usage),
a block cut off by the token limit, bare code, or only a function body. The rules:

1. Candidates: fenced Python blocks (an unterminated last block counts) that define the
   entry point, last first (later blocks usually fix earlier drafts); then the other Python
   blocks, first first; then the raw text.
2. A candidate that does not parse is cut back to its longest parseable prefix (a truncated
   answer keeps its complete functions), after dropping any prose before the first line that
   looks like code.
3. A candidate that defines the entry point is the solution. Otherwise, when the problem has
   prompt code (HumanEval), the candidate is tried as the function's body: appended to the
   prompt as is, then re-indented.
4. The solution is sanitised (the idea of evalplus's sanitiser): only imports and the
   definitions the entry point and the tests reach are kept, so the model's own example
   calls, prints, asserts and `if __name__ == "__main__":` blocks cannot fail a correct
   function, read stdin, or slow the run.

`extract_solution` returns None when no candidate yields code defining the entry point.
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from collections.abc import Iterable, Iterator

# An opening fence (its info string captured), the block, then a closing fence or the end
# of the text (an answer cut off by the token limit).
_FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*```|\Z)", re.S | re.M)
_PYTHON_TAGS = {"", "python", "python3", "py", "py3", "python2"}
_CODE_START = re.compile(r"^(?:from\s+\w|import\s+\w|def\s|async\s+def\s|class\s|@\w)", re.M)
_MAX_TRIMMED_LINES = 400


def parse_quietly(code: str) -> ast.Module:
    """`ast.parse` without the SyntaxWarnings (e.g. "invalid escape sequence") that
    model and dataset code routinely triggers; those are not errors when the code runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code)


def fenced_blocks(text: str) -> list[str]:
    """The contents of the fenced blocks tagged as Python (or untagged), in order."""
    return [body for tag, body in _FENCE.findall(text) if tag.lower() in _PYTHON_TAGS]


def extract_solution(
    text: str, entry_point: str, prompt: str | None = None, test_code: str = ""
) -> str | None:
    """The sanitised solution code in `text` that defines `entry_point`, or None.

    `prompt` is the problem's code (HumanEval's signature and docstring): a body-only
    answer is completed with it. `test_code` names what the tests use besides the entry
    point (e.g. a helper), so the sanitiser keeps those definitions too."""
    for candidate in _candidates(text, entry_point):
        code = parseable_prefix(candidate)
        if code is not None and entry_point in defined_names(code):
            return sanitise(code, entry_point, test_code)
        if prompt is not None:
            for body in _body_variants(candidate):
                full = parseable_prefix(prompt + body)
                if full is not None and _extends(full, prompt, entry_point):
                    return sanitise(full, entry_point, test_code)
    return None


def _extends(full: str, prompt: str, entry_point: str) -> bool:
    """Whether `full` continues the prompt's entry-point function past its docstring stub
    (an answer appended at the top level would leave the stub as the "solution")."""
    stub_end = _def_end(prompt, entry_point)
    end = _def_end(full, entry_point)
    return stub_end is not None and end is not None and end > stub_end


def _def_end(code: str, name: str) -> int | None:
    try:
        body = parse_quietly(code).body
    except (SyntaxError, ValueError):
        return None
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    ends = [n.end_lineno or n.lineno for n in body if isinstance(n, functions) and n.name == name]
    return ends[-1] if ends else None


def _candidates(text: str, entry_point: str) -> Iterator[str]:
    blocks = fenced_blocks(text)
    defining = [b for b in blocks if re.search(rf"\bdef\s+{re.escape(entry_point)}\s*\(", b)]
    yield from reversed(defining)
    yield from (b for b in blocks if b not in defining)
    if not blocks:
        yield text
        start = _CODE_START.search(text)
        if start is not None and start.start() > 0:
            yield text[start.start() :]  # prose before the code


def _body_variants(candidate: str) -> Iterator[str]:
    """`candidate` as a function body: as given, then with its indentation repaired."""
    if not candidate.strip():
        return
    yield candidate
    lines = candidate.strip("\n").splitlines()
    if lines and not lines[0].startswith((" ", "\t")):
        rest_indented = all(not ln.strip() or ln.startswith((" ", "\t")) for ln in lines[1:])
        if rest_indented and len(lines) > 1:  # only the first line lost its indent
            yield "    " + "\n".join(lines) + "\n"
        else:  # the whole body was dedented
            yield textwrap.indent(textwrap.dedent("\n".join(lines)), "    ") + "\n"


def parseable_prefix(code: str) -> str | None:
    """`code` (dedented) if it parses, else its longest parseable prefix of whole lines,
    else None. Empty or whitespace-only code is None."""
    code = textwrap.dedent(code)
    lines = code.splitlines()
    for end in range(len(lines), max(0, len(lines) - _MAX_TRIMMED_LINES), -1):
        prefix = "\n".join(lines[:end]).rstrip()
        if not prefix:
            return None
        try:
            parse_quietly(prefix)
        except (SyntaxError, ValueError):  # ValueError: null bytes in the source
            continue
        return prefix + "\n"
    return None


def defined_names(code: str) -> set[str]:
    """Top-level names that `code` (which must parse) defines."""
    names: set[str] = set()
    for node in parse_quietly(code).body:
        names.update(_defines(node))
    return names


def sanitise(code: str, entry_point: str, test_code: str = "") -> str:
    """Keep imports and the top-level definitions reachable from the entry point and from
    the names the tests use; drop every other statement (calls, prints, asserts, loops)."""
    tree = parse_quietly(code)
    roots = {entry_point} | _used_names(_parse_or_empty(test_code))
    keep = _reachable(tree.body, roots)
    kept_lines: set[int] = set()
    dropped_lines: set[int] = set()
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in _decorators(node))])
        span = range(first, (node.end_lineno or node.lineno) + 1)
        kept = isinstance(node, (ast.Import, ast.ImportFrom)) or node in keep
        (kept_lines if kept or _imports_only(node) else dropped_lines).update(span)
    # Removing the dropped lines (not re-joining the kept ones) keeps comments and spacing;
    # a line shared by a kept and a dropped statement (`a = 1; print(a)`) stays.
    lines = code.splitlines()
    remaining = [ln for i, ln in enumerate(lines, 1) if i in kept_lines or i not in dropped_lines]
    return "\n".join(remaining).strip("\n") + "\n"


def _reachable(body: list[ast.stmt], roots: set[str]) -> set[ast.stmt]:
    definers: dict[str, list[ast.stmt]] = {}
    for node in body:
        if isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)
        ):
            for name in _defines(node):
                definers.setdefault(name, []).append(node)
    keep: set[ast.stmt] = set()
    pending = [name for name in roots if name in definers]
    while pending:
        for node in definers.get(pending.pop(), []):
            if node not in keep:
                keep.add(node)
                pending.extend(n for n in _free_names(node) if n in definers)
    return keep


def _defines(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _free_names(node: ast.stmt) -> set[str]:
    """Names `node` reads from the module: for a function or class, those it does not bind
    itself (its parameters and local assignments), unless declared `global`."""
    used = _used_names([node])
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return used
    local = {
        a.arg
        for n in ast.walk(node)
        if isinstance(n, ast.arguments)
        for a in [*n.posonlyargs, *n.args, *n.kwonlyargs, n.vararg, n.kwarg]
        if a
    }
    local |= {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    }
    declared = {name for n in ast.walk(node) if isinstance(n, ast.Global) for name in n.names}
    return (used - local) | declared | {node.name}


def _used_names(nodes: Iterable[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def _parse_or_empty(code: str) -> list[ast.stmt]:
    try:
        return parse_quietly(code).body
    except (SyntaxError, ValueError):
        return []


def _decorators(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.decorator_list
    return []


def _imports_only(node: ast.stmt) -> bool:
    """`try: import x / except ImportError: ...` fallbacks are imports too."""
    if not isinstance(node, ast.Try):
        return False
    body = node.body + [s for h in node.handlers for s in h.body] + node.orelse
    return all(isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass)) for s in body)
