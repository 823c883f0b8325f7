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


_PROBE = "SPADE-TURN-PROBE"


class ChatTokens:
    """What a multi-turn episode appends to its token sequence between two sampled replies.

    A later turn's prompt is the earlier prompt, the reply exactly as sampled, and then the
    chat template's own rendering of what came next (the end of the assistant turn, the new
    messages, the generation prompt): never a re-render of the whole history, which need not
    tokenise back to the sampled ids and may rewrite earlier turns (templates that drop
    reasoning, strip whitespace, ...).

    The delta is read off the template by rendering a probe exchange with and without the
    new messages; a template whose rendering of a history is not a prefix of the rendering
    of that history extended is refused (it cannot be continued token-in).
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        probe: Conversation = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": _PROBE},
        ]
        self._probe = probe
        self._closed = self._render(probe, generation_prompt=False)
        if _PROBE not in self._closed:
            raise ValueError("the chat template does not render assistant replies verbatim")
        self.turn_end = self._closed.split(_PROBE, 1)[1]
        """Text the template closes an assistant turn with (e.g. `<|im_end|>\\n`)."""
        self.end_of_turn_id = end_of_turn_id(tokenizer)
        eos = {tokenizer.eos_token_id, self.end_of_turn_id}
        self.stop_ids = {int(i) for i in eos if i is not None}
        """Sampled tokens that end a reply (the turn is then closed by the model itself)."""

    def _render(self, conversation: Conversation, generation_prompt: bool) -> str:
        text = self.tokenizer.apply_chat_template(
            conversation, add_generation_prompt=generation_prompt, tokenize=False
        )
        if not isinstance(text, str):
            raise TypeError(f"chat template returned {type(text).__name__}, expected str")
        return text

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def continuation(self, completion_ids: list[int], new_messages: Conversation) -> list[int]:
        """Token ids to append after a sampled reply so the next reply can be sampled.

        A reply that ended with an end-of-turn token is closed by it (the rest of the
        template's turn ending follows); one cut off at the token limit is closed here with
        the template's whole turn ending (context for the next turn, never a trained token).
        """
        extended = self._render(self._probe + list(new_messages), generation_prompt=True)
        if not extended.startswith(self._closed):
            raise ValueError(
                "the chat template re-renders earlier turns when a message is added, so an "
                "episode cannot be continued token-in"
            )
        delta = extended[len(self._closed) :]
        closing = self.turn_end
        if completion_ids and completion_ids[-1] in self.stop_ids:
            eot = self.tokenizer.convert_ids_to_tokens(self.end_of_turn_id)
            closing = closing[len(eot) :] if closing.startswith(eot) else ""
        return self._ids(closing + delta)


def end_of_turn_id(tokenizer: Any) -> int:
    """The token the chat template closes an assistant turn with (e.g. `<|im_end|>`).

    Found by rendering a probe reply: the first special token after it. Falls back to the
    tokenizer's eos token.
    """
    probe = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": _PROBE}]
    text = tokenizer.apply_chat_template(probe, tokenize=False)
    if isinstance(text, str) and _PROBE in text:
        suffix = text.split(_PROBE, 1)[1]
        special = set(tokenizer.all_special_ids)
        for token in tokenizer(suffix, add_special_tokens=False)["input_ids"]:
            if token in special:
                return int(token)
    if tokenizer.eos_token_id is None:
        raise ValueError("cannot tell the end-of-turn token: no special token closes a turn")
    return int(tokenizer.eos_token_id)
