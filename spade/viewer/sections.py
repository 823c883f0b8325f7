"""Detail views of arbitrary record values, as the page's JavaScript draws them.

Records come from several runners whose shapes differ (and change): a chat, a dict of
texts, a list of moves, BFCL's turns of steps of calls, or anything else. Each value becomes
one *section* the page knows how to draw; anything unrecognised is shown as indented JSON,
so nothing a record holds is hidden. Texts are indices into the page's `StringTable`.

Section kinds (`k`), each with a title `t`:
- `chat`: `m` is a list of messages `{"r": role, "t": text, "n": name, "c": [tool call
  texts], "s": step number, "w": reward, "x": other keys as JSON}`, only `r` always present;
- `text` / `code` / `json`: `v` is one text;
- `list`: `v` is a list of texts (shown numbered);
- `fields`: `v` is a list of `[name, text]` pairs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, TypeGuard

from spade.viewer.strings import StringTable

Section = dict[str, Any]
PREVIEW_CHARS = 160
_MESSAGE_KEYS = {"role", "content", "tool_calls", "name", "tool_call_id"}


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a dict, else an empty one: records written by other versions may
    lack a field or hold another type there."""
    return value if isinstance(value, dict) else {}


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=repr, sort_keys=False)


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A one-line rendering of a value for a table cell."""
    if value is None:
        return ""
    if isinstance(value, float):
        return format_number(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "—"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def is_chat(value: Any) -> TypeGuard[list[dict[str, Any]]]:
    """A non-empty list of OpenAI-style messages (dicts with a string `role`)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in value)
    )


def _content_text(content: Any) -> str | None:
    if content is None or content == "":
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts: keep the text ones as text
        parts = [p.get("text") if isinstance(p, dict) else None for p in content]
        if all(isinstance(p, str) for p in parts):
            return "\n".join(str(p) for p in parts)
    return pretty_json(content)


def call_text(call: Any) -> str:
    """A tool call as `name(arguments)`: OpenAI's `{"function": {"name", "arguments"}}`,
    a bare `{"name", "arguments"}`, or a call string as BFCL writes them."""
    if isinstance(call, str):
        return call
    if isinstance(call, dict):
        function = as_dict(call.get("function")) or call
        name, arguments = function.get("name"), function.get("arguments")
        if isinstance(name, str):
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except json.JSONDecodeError:
                    return f"{name}({arguments})"
            shown = json.dumps(arguments, ensure_ascii=False, default=repr)
            return f"{name}({shown})" if arguments is not None else f"{name}()"
    return json.dumps(call, ensure_ascii=False, default=repr)


def chat_section(
    title: str,
    messages: Sequence[dict[str, Any]],
    strings: StringTable,
    rewards: Sequence[Any] | None = None,
    number_steps: bool = False,
) -> Section:
    """A chat; with `number_steps`, assistant messages are numbered as the episode's steps
    and get `rewards[i]` when there is one reward per assistant message."""
    replies = sum(m.get("role") == "assistant" for m in messages)
    numbers = [float(r) for r in rewards or [] if isinstance(r, (int, float))]
    usable = numbers if rewards is not None and len(numbers) == len(rewards) == replies else None
    shown, step = [], 0
    for message in messages:
        text = _content_text(message.get("content"))
        calls = message.get("tool_calls")
        name = message.get("name") or message.get("tool_call_id")
        rest = {k: v for k, v in message.items() if k not in _MESSAGE_KEYS}
        entry: dict[str, Any] = {"r": message["role"]}  # absent keys: nothing to show
        if text is not None:
            entry["t"] = strings.add(text)
        if name:
            entry["n"] = strings.add(str(name))
        if isinstance(calls, list) and calls:
            entry["c"] = [strings.add(call_text(c)) for c in calls]
        if rest:
            entry["x"] = strings.add(pretty_json(rest))
        if message["role"] == "assistant" and number_steps:
            entry["s"] = step + 1
            if usable is not None:
                entry["w"] = usable[step]
            step += 1
        shown.append(entry)
    return {"t": title, "k": "chat", "m": shown}


def _is_call_turns(value: Any) -> bool:
    """BFCL's multi-turn output: turns, each a list of steps, each a list of call strings."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(turn, list) for turn in value)
        and all(isinstance(step, list) for turn in value for step in turn)
        and all(isinstance(c, str) for turn in value for step in turn for c in step)
    )


def _call_turn_lines(turns: list[list[list[str]]]) -> list[str]:
    lines = []
    for t, turn in enumerate(turns, 1):
        if not turn:
            lines.append(f"turn {t}: (no calls)")
        for s, step in enumerate(turn, 1):
            lines.append(f"turn {t} · step {s}: " + ("; ".join(step) if step else "(no calls)"))
    return lines


def value_section(title: str, value: Any, strings: StringTable) -> Section:
    """The best view of one record value."""
    if isinstance(value, str):
        return {"t": title, "k": "text", "v": strings.add(value)}
    if is_chat(value):
        return chat_section(title, value, strings)
    if _is_call_turns(value):
        return {"t": title, "k": "list", "v": [strings.add(s) for s in _call_turn_lines(value)]}
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return {"t": title, "k": "list", "v": [strings.add(v) for v in value]}
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        return {"t": title, "k": "fields", "v": [[k, strings.add(v)] for k, v in value.items()]}
    return {"t": title, "k": "json", "v": strings.add(pretty_json(value))}


def fields_section(title: str, pairs: Sequence[tuple[str, Any]], strings: StringTable) -> Section:
    """Name/value pairs; values that are None are left out."""
    shown = [[name, strings.add(_field_text(value))] for name, value in pairs if value is not None]
    return {"t": title, "k": "fields", "v": shown}


def _field_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return format_number(value) if isinstance(value, (int, float)) else pretty_json(value)
