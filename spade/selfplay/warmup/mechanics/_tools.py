"""Pieces of tool-use env sources: tool schemas (two layouts) and JSON call parsing.

Tool schemas dominate a tool env's token count, so both layouts are compact: one-line
schemas sharing a `parameters` constant per argument set, or a small `_tool` builder.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

_BUILDER = (
    "def _tool(name, doc, **args):\n"
    '    props = {key: {"type": kind} for key, kind in args.items()}\n'
    '    params = {"type": "object", "properties": props, "required": list(args)}\n'
    '    return {"type": "function", "function": '
    '{"name": name, "description": doc, "parameters": params}}'
)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    params: tuple[tuple[str, str], ...]
    """(argument, JSON type) pairs, all required."""


@dataclass(frozen=True)
class Schemas:
    module: str
    """Module-level code the tools list needs (constants or the builder), ends in a newline."""
    attribute: str
    """The class body's `tools = [...]` statement (4-space indent)."""


_FN = (
    "def _fn(name, doc$param):\n"
    '    return {"type": "function", "function": '
    '{"name": name, "description": doc, "parameters": $value}}'
)
_CONSTANT_NAMES = ("ARGS", "ARGS2", "ARGS3")


def schemas(rng: random.Random, tools: list[Tool]) -> Schemas:
    """One of three layouts: a `_tool` builder, parameter constants with a `_fn` wrapper, or
    parameter constants with one-line schemas."""
    layout = rng.choices(["builder", "wrapper", "inline", "loop"], weights=[1, 3, 2, 4])[0]
    if layout == "loop" and len({tool.params for tool in tools}) > 1:
        layout = "wrapper"
    if layout == "builder":
        calls = []
        for tool in tools:
            args = "".join(f", {arg}={json.dumps(kind)}" for arg, kind in tool.params)
            calls.append(
                f"        _tool({json.dumps(tool.name)}, {json.dumps(tool.description)}{args}),"
            )
        return Schemas(f"\n\n{_BUILDER}\n", "    tools = [\n" + "\n".join(calls) + "\n    ]")
    constants: dict[tuple[tuple[str, str], ...], str] = {}
    for tool in tools:
        if tool.params not in constants:
            props = {arg: {"type": kind} for arg, kind in tool.params}
            required = [arg for arg, _ in tool.params]
            constants[tool.params] = json.dumps(
                {"type": "object", "properties": props, "required": required}
            )
    names = dict(zip(constants, _CONSTANT_NAMES, strict=False))
    module = "".join(f"{names[key]} = {text}\n" for key, text in constants.items())
    if layout == "loop":
        pairs = ", ".join(f"({json.dumps(t.name)}, {json.dumps(t.description)})" for t in tools)
        code = (
            '    tools = [{"type": "function", "function": {"name": n, '
            '"description": d, "parameters": ARGS}}\n'
            f"             for n, d in [{pairs}]]"
        )
        return Schemas(module, code)
    lines = []
    for tool in tools:
        name, doc, params = json.dumps(tool.name), json.dumps(tool.description), names[tool.params]
        if layout == "wrapper":
            lines.append(f"_fn({name}, {doc}" + (f", {params})" if params != "ARGS" else ")"))
        else:
            function = f'"name": {name}, "description": {doc}, "parameters": {params}'
            lines.append(f'{{"type": "function", "function": {{{function}}}}}')
    if layout == "wrapper":
        shared = len(constants) == 1
        wrapper = _FN.replace("$param", "" if shared else ", params=ARGS")
        module += "\n\n" + wrapper.replace("$value", "ARGS" if shared else "params") + "\n"
        one_line = "    tools = [" + ", ".join(lines) + "]"
        if len(one_line) <= 96:
            return Schemas(module, one_line)
    body = "\n".join(f"        {line}," for line in lines)
    return Schemas(module, f"    tools = [\n{body}\n    ]")


def call_parse(rng: random.Random, take: str) -> str:
    """Code that sets `name` and the arguments `take` reads (an expression of `args`, e.g.
    `str(args["item"])` assigned to `item`) from a JSON call; a bad call sets them to None."""
    target, expression = take.split(" = ", 1)
    inline = expression.replace("args", 'call["arguments"]')
    if rng.random() < 0.65:
        return (
            "        try:\n"
            "            call = json.loads(action)\n"
            f'            name, {target} = call["name"], {inline}\n'
            "        except (ValueError, TypeError, KeyError):\n"
            f"            name = {target.replace(',', ' =')} = None"
        )
    return (
        "        try:\n"
        "            call = json.loads(action)\n"
        f'            name, args = call.get("name"), call.get("arguments") or {{}}\n'
        f"            {target} = {expression}\n"
        "        except (ValueError, TypeError, KeyError, AttributeError):\n"
        f"            name = {target.replace(',', ' =')} = None"
    )


def call(name: str, arguments: str) -> str:
    """Generated code for a solution action: `json.dumps` of one call."""
    return f'json.dumps({{"name": "{name}", "arguments": {arguments}}})'
