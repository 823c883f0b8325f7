"""Warm-start examples as token sequences, built the way the RL rollouts build them.

An agent episode becomes one sequence: turn 0's rendered prompt, then each reply's ids with
the end-of-turn token and the chat template's delta for the observations that follow
(`ChatTokens.continuation`), exactly the token-in construction of `spade.rollout.EnvDriver`.
Only the replies (and their end-of-turn tokens) are learned. A designer or hint example is
the rendered prompt and one reply; a repair example the rendered repair prompt (the failed
reply in it is context) and the corrected reply.
"""

from __future__ import annotations

from typing import Any

from spade.models.chat_template import ChatTokens, render_prompt
from spade.models.policy import Conversation
from spade.rl.sft import SftExample


class ExampleTokens:
    """Tokenises chats into `SftExample`s with one tokenizer and its chat template."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.chat = ChatTokens(tokenizer)

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def conversation(
        self, messages: Conversation, source: str, last_only: bool = False
    ) -> SftExample:
        """Every assistant message of `messages` is learned (`last_only`: only the last; the
        earlier ones are context, rendered into the prompt as a chat request renders them,
        e.g. a repair prompt's failed reply); the rest is context."""
        turns = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
        if not turns:
            raise ValueError(f"{source}: no assistant message to learn")
        if last_only:
            turns = turns[-1:]
        ids = self._ids(render_prompt(self.tokenizer, list(messages[: turns[0]])))
        mask = [0] * len(ids)
        for k, index in enumerate(turns):
            reply = [*self._ids(str(messages[index]["content"])), self.chat.end_of_turn_id]
            ids += reply
            mask += [1] * len(reply)
            following = messages[index + 1 : turns[k + 1]] if k + 1 < len(turns) else []
            if not following:
                break
            delta = self.chat.continuation(reply, list(following))
            ids += delta
            mask += [0] * len(delta)
        return SftExample(tuple(ids), tuple(mask), source)
