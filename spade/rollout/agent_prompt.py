"""What the Reasoning Agent sees: the system prompt, observations, and how a reply becomes
an action.

Text envs: the agent writes its command as `\\boxed{...}` (the reference code's convention);
the whole reply goes to the env, which reads the box itself. Tool-use envs: the agent writes
one JSON tool call; we pass on the first JSON object in the reply that names a tool, or the
raw reply (which the env answers with an error observation) when there is none.
"""

from __future__ import annotations

import json
from typing import Any

TEXT_RULES = (
    "You are playing an interactive environment. Each user message is the environment's "
    "latest observation. Think briefly, then give exactly one command per turn written as "
    "\\boxed{COMMAND}, using the command format the environment describes."
)
TOOL_RULES = (
    "You are operating an application through tools. Each user message is the result of your "
    "last tool call. Give exactly one tool call per turn as a JSON object "
    '{{"name": TOOL_NAME, "arguments": {{...}}}}. The tools:\n{tools}'
)


def system_prompt(tools: list[dict[str, Any]] | None, hint: str | None = None) -> str:
    """The agent's instructions; `hint` is the privileged strategy hint (hinted plays only)."""
    if tools:
        listing = "\n".join(json.dumps(tool["function"], ensure_ascii=False) for tool in tools)
        text = TOOL_RULES.format(tools=listing)
    else:
        text = TEXT_RULES
    if hint:
        text += f"\n\nStrategy hint: {hint}"
    return text


def action_from_reply(reply: str, tools: list[dict[str, Any]] | None) -> str:
    """The action sent to the env for this reply."""
    if not tools:
        return reply
    call = first_tool_call(reply)
    return json.dumps(call, ensure_ascii=False) if call is not None else reply


def first_tool_call(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text` shaped like `{"name": str, "arguments": {...}}`."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            arguments = value.get("arguments", value.get("parameters", {}))
            return {"name": value["name"], "arguments": arguments}
        start = text.find("{", start + 1)
    return None
