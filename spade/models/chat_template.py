"""Render a conversation (and its tools) into prompt text with the model's chat template."""

from __future__ import annotations

import json
from typing import Any

from spade.models.policy import Conversation, ToolSchema

# Said to models whose chat template has no place for tools (SmolLM2's, for one), so a
# tool-use env is still playable; the call format is the env contract's action format.
TOOLS_FALLBACK_PROMPT = (
    "You can call these functions. To call one, reply with only a JSON object "
    '{{"name": FUNCTION_NAME, "arguments": {{...}}}}.\n<tools>\n{tools}\n</tools>'
)


def template_supports_tools(tokenizer: Any) -> bool:
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, dict):  # named templates: {"default": ..., "tool_use": ...}
        return "tool_use" in template or any("tools" in t for t in template.values())
    return isinstance(template, str) and "tools" in template


def with_tools_in_system_prompt(
    conversation: Conversation, tools: list[ToolSchema]
) -> Conversation:
    """The conversation with the tools described in its system message (added if absent)."""
    listing = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    note = TOOLS_FALLBACK_PROMPT.format(tools=listing)
    if conversation and conversation[0].get("role") == "system":
        first = dict(conversation[0])
        first["content"] = f"{first.get('content') or ''}\n\n{note}".lstrip()
        return [first, *conversation[1:]]
    return [{"role": "system", "content": note}, *conversation]


def render_prompt(
    tokenizer: Any, conversation: Conversation, tools: list[ToolSchema] | None = None
) -> str:
    """Prompt text ending where the assistant's reply starts."""
    if not conversation:
        raise ValueError("cannot generate for an empty conversation")
    if tools and not template_supports_tools(tokenizer):
        conversation, tools = with_tools_in_system_prompt(conversation, tools), None
    text = tokenizer.apply_chat_template(
        conversation, tools=tools or None, add_generation_prompt=True, tokenize=False
    )
    if not isinstance(text, str):
        raise TypeError(f"chat template returned {type(text).__name__}, expected str")
    return text
