"""Function-calling mode: native tool calls in a reply's text, to BFCL call strings.

The policy renders the tools with the model's own chat template and returns text, so the
calls are read back from the formats chat templates teach:
- `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks (Hermes, Qwen, SmolLM3);
- `[TOOL_CALLS] [{"name": ..., "arguments": {...}}]` (Mistral);
- `<|python_tag|>{"name": ..., "parameters": {...}}` or bare JSON objects (Llama 3.x, and
  spade's fallback for templates without tools, which asks for `{"name", "arguments"}`;
  the OpenAI backend appends server-parsed calls in that form too).
A call becomes `name(k=repr(v),...)`, as bfcl-eval's `convert_to_function_call` writes it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from spade.evals.bfcl.decoding import DecodeError

_TAGGED = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_PREFIXES = ("[TOOL_CALLS]", "<|python_tag|>")


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]

    def call_string(self) -> str:
        # convert_to_function_call: no space after the commas, values as Python reprs.
        return f"{self.name}({','.join(f'{k}={v!r}' for k, v in self.arguments.items())})"


def extract_tool_calls(text: str) -> list[ToolCall]:
    """The calls in a reply, in order; `[]` when it makes none (the turn is over).

    Raises `DecodeError` for a call-shaped reply that cannot be read (bad JSON inside a
    `<tool_call>` block, arguments that are not an object).
    """
    blocks = _TAGGED.findall(text)
    if blocks:
        values = []
        for block in blocks:
            try:
                values.append(json.loads(block))
            except json.JSONDecodeError as exc:
                raise DecodeError(f"<tool_call> block is not JSON: {exc}") from None
    else:
        for prefix in _PREFIXES:
            if prefix in text:
                text = text.split(prefix, 1)[1]
        values = _json_values(text)
    calls = []
    for value in values:
        for item in value if isinstance(value, list) else [value]:
            call = _as_call(item)
            if call is not None:
                calls.append(call)
    return calls


def _json_values(text: str) -> list[Any]:
    """Every top-level JSON object or array in `text` (prose around them is skipped)."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    while True:
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            return values
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        values.append(value)
        position = end


def _as_call(item: Any) -> ToolCall | None:
    if not isinstance(item, dict):
        return None
    if "function" in item and isinstance(item["function"], dict):  # OpenAI's nesting
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str):
        return None
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):  # some formats carry the arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise DecodeError(f"{name}: arguments are not JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise DecodeError(f"{name}: arguments must be an object, got {type(arguments).__name__}")
    return ToolCall(name, arguments)
