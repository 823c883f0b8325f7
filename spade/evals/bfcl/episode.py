"""One BFCL entry played by a model, turn by turn, as bfcl-eval's inference loop plays it.

Per turn (`BaseHandler.inference_multi_turn_prompting` / `_FC`): the turn's user messages
join the conversation (on a held-out function's turn: a message saying functions were
added, and in function-calling mode the tools grow); then steps: the model replies, the
reply is decoded, and when it holds calls they run on the entry's backends and their
results join the conversation as `tool` messages. A reply without decodable calls ends the
turn. A turn that executes more than `STEP_LIMIT` steps force-quits the whole entry (the
checker then fails it for having fewer turns than the ground truth).

Prompting mode (BFCL's default for local models, and the only one for chat templates
without tools) lists the functions in BFCL's system prompt and reads replies as
`[f(a=1), g(b=2)]`. Function-calling mode passes the functions as OpenAI tool schemas,
which the policy renders with the model's chat template, and reads the template's native
tool calls back from the reply.
"""

from __future__ import annotations

from typing import Any, Literal

from spade.evals.bfcl.data import BfclEntry
from spade.evals.bfcl.decoding import DecodeError, decode_prompting
from spade.evals.bfcl.prompts import (
    HOLDOUT_MESSAGE_FC,
    STEP_LIMIT,
    first_turn_messages,
    holdout_message_prompting,
    tool_schemas,
)
from spade.evals.bfcl.tool_calls import ToolCall, extract_tool_calls
from spade.models.policy import Message, SamplingParams
from spade.rollout import GenRequest

Mode = Literal["prompting", "function_calling"]
ERROR_PREFIX = "Error during execution:"
"""How bfcl-eval's executor starts the result of a call that raised."""
_LOGGED_CHARS = 300


class Episode:
    """The conversation, the executed calls per turn and step, and what went wrong."""

    def __init__(self, entry: BfclEntry, mode: Mode, benchmark: str, sampling: SamplingParams):
        self.entry = entry
        self.mode = mode
        self.benchmark = benchmark
        self.sampling = sampling
        self.messages: list[Message] = []
        self.functions = list(entry.functions)
        self.tools = tool_schemas(self.functions) if mode == "function_calling" else None
        self.turn = 0
        self.steps = 0
        """Steps executed in the current turn."""
        self.output: list[list[list[str]]] = []
        """Per turn, per executed step, the call strings: the predictions format."""
        self.replies: list[list[str]] = []
        """Per turn, every raw reply (the last one of a turn is the one that ended it)."""
        self.decode_errors: list[dict[str, Any]] = []
        self.call_errors: list[dict[str, Any]] = []
        self.force_quit = False
        self.done = False
        self._pending: list[ToolCall] = []
        self._begin_turn()

    def request(self) -> GenRequest:
        tools = tuple(self.tools) if self.tools is not None else None
        return GenRequest(self.benchmark, self.entry.id, tuple(self.messages), self.sampling, tools)

    def reply(self, text: str) -> list[str] | None:
        """Take the model's reply; the calls to execute, or None when the turn is over."""
        self.replies[-1].append(text)
        try:
            calls = self._decode(text)
        except DecodeError as exc:
            self.decode_errors.append(self._where(error=str(exc), reply=text[:_LOGGED_CHARS]))
            calls = []
        if not calls:
            self._end_turn()
            return None
        return calls

    def results(self, calls: list[str], results: list[str]) -> None:
        """Take the execution results of the calls `reply` returned."""
        for index, (call, result) in enumerate(zip(calls, results, strict=True)):
            if self.mode == "prompting":
                self.messages.append({"role": "tool", "name": call, "content": result})
            else:
                tool_call = self._pending[index]
                self.messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": self._call_id(index),
                        "name": tool_call.name,
                        "content": result,
                    }
                )
            if result.startswith(ERROR_PREFIX):
                self.call_errors.append(self._where(call=call, result=result[:_LOGGED_CHARS]))
        self.output[-1].append(calls)
        self.steps += 1
        if self.steps > STEP_LIMIT:
            self.force_quit = self.done = True

    def _where(self, **fields: Any) -> dict[str, Any]:
        """An error log record: the turn and step it happened at, then `fields`."""
        return {"turn": self.turn, "step": self.steps, **fields}

    # -- turns and decoding ----------------------------------------------------------------
    def _begin_turn(self) -> None:
        messages = [dict(m) for m in self.entry.question[self.turn]]
        held = self.entry.missed_functions.get(self.turn)
        if held is not None:
            if self.mode == "function_calling":
                self.functions += held
                self.tools = tool_schemas(self.functions)
                messages = [{"role": "user", "content": HOLDOUT_MESSAGE_FC}]
            else:  # the system prompt stays as it was; the message lists the new docs
                messages = [{"role": "user", "content": holdout_message_prompting(held)}]
        if self.turn == 0 and self.mode == "prompting":
            messages = first_turn_messages(messages, self.entry.functions)
        self.messages += messages
        self.output.append([])
        self.replies.append([])
        self.steps = 0

    def _end_turn(self) -> None:
        self.turn += 1
        if self.turn == len(self.entry.question):
            self.done = True
        else:
            self._begin_turn()

    def _decode(self, text: str) -> list[str]:
        if self.mode == "prompting":
            self.messages.append({"role": "assistant", "content": text})
            return decode_prompting(text)
        try:
            self._pending = extract_tool_calls(text)
        except DecodeError:
            self.messages.append({"role": "assistant", "content": text})
            raise
        if not self._pending:
            self.messages.append({"role": "assistant", "content": text})
            return []
        # As bfcl-eval's local function-calling handlers do: the calls replace the text, so
        # the template renders them in its own format.
        calls = [
            {
                "id": self._call_id(i),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for i, c in enumerate(self._pending)
        ]
        self.messages.append({"role": "assistant", "content": "", "tool_calls": calls})
        return [c.call_string() for c in self._pending]

    def _call_id(self, index: int) -> str:
        # Nine alphanumerics: the strictest templates (Mistral's) require exactly that.
        return f"{self.turn % 100:02d}{self.steps % 100:02d}{index % 100000:05d}"
