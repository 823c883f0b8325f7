"""Tool-use environments: OpenAI-style tool schemas and JSON tool-call actions."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

# The wrapper every tool must have; `parameters` is then checked as a JSON Schema itself.
TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "function"],
    "properties": {
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name", "description", "parameters"],
            "properties": {
                "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"},
                "description": {"type": "string"},
                "parameters": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"const": "object"}},
                },
            },
        },
    },
}


class ToolSchemaError(ValueError):
    """A tool definition is not a valid OpenAI-style function schema."""


class ToolCallError(ValueError):
    """An action is not a valid call of one of the env's tools."""


def validate_tools(tools: object) -> list[dict[str, Any]]:
    """Check a `tools` list; raises `ToolSchemaError` naming the first bad tool."""
    if not isinstance(tools, list) or not tools:
        raise ToolSchemaError("tools must be a non-empty list of function schemas")
    names: set[str] = set()
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        try:
            jsonschema.validate(tool, TOOL_SCHEMA)
            jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])
        except jsonschema.ValidationError as exc:
            raise ToolSchemaError(f"{where}: {exc.message}") from None
        except jsonschema.SchemaError as exc:
            raise ToolSchemaError(f"{where}.function.parameters: {exc.message}") from None
        name = tool["function"]["name"]
        if name in names:
            raise ToolSchemaError(f"{where}: duplicate tool name {name!r}")
        names.add(name)
    return tools  # type: ignore[return-value]


def tool_call_action(name: str, arguments: dict[str, Any]) -> str:
    """The action string for calling `name` (the contract's action format)."""
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def parse_tool_call(action: str, tools: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """Parse and validate a tool-call action against the env's tools."""
    try:
        call = json.loads(action)
    except json.JSONDecodeError as exc:
        raise ToolCallError(f"action is not JSON: {exc.msg}") from None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise ToolCallError('action must be {"name": NAME, "arguments": {...}}')
    arguments = call.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ToolCallError("arguments must be a JSON object")
    by_name = {tool["function"]["name"]: tool["function"] for tool in tools}
    function = by_name.get(call["name"])
    if function is None:
        raise ToolCallError(f"unknown tool {call['name']!r}; known: {', '.join(sorted(by_name))}")
    try:
        jsonschema.validate(arguments, function["parameters"])
    except jsonschema.ValidationError as exc:
        raise ToolCallError(f"{call['name']}: {exc.message}") from None
    return call["name"], arguments
