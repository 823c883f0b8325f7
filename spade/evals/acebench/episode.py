"""The dialogues of ACEBench's two agent settings, as state machines (no model calls here).

multi_step: the task is the user's only message; every agent message goes to execution
(one that is not a call is answered with a request to use the known facts) until the agent
says FINISH. multi_turn: a simulated user opens; an agent message that parses as calls goes
to execution, any other goes to the user; either side ends the dialogue with FINISH.

As upstream, `index` counts the messages after the first one, FINISH counts only from
index 2 on, and `max_turns` caps `index` (upstream's `max_dialog_turns`, default 40).
`process` collects the agent messages sent to execution: what milestones are matched against.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from spade.evals.acebench import prompts
from spade.evals.acebench.calls import CallSyntaxError, parse_calls
from spade.evals.acebench.data import Entry
from spade.evals.acebench.scenario import Scenario
from spade.models.policy import Message

Role = Literal["user", "agent", "execution"]
_LOOKS_LIKE_CALLS = re.compile(r"\[.*\]")  # upstream's test for "this is meant for execution"
_LOGGED_CHARS = 500


@dataclass
class Turn:
    sender: Role
    recipient: Role
    content: str


@dataclass
class Episode:
    entry: Entry
    max_turns: int
    scenario: Scenario = field(init=False)
    turns: list[Turn] = field(default_factory=list)
    index: int = 0
    done: bool = False
    finished: bool = False
    """Ended by FINISH (rather than by the turn cap or the end of saved outputs)."""
    process: list[str] = field(default_factory=list)
    executed: list[str] = field(default_factory=list)
    """Calls that ran (rendered), in order: the parsed answer."""
    malformed: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    """Calls that raised inside an app (their error text went back to the model)."""

    def __post_init__(self) -> None:
        entry = self.entry
        self.scenario = Scenario(entry.involved_classes, entry.initial_config, entry.functions)

    def _add(self, turn: Turn) -> None:
        """Append a message after the first; FINISH or the turn cap may end the dialogue."""
        position = self.index
        self.turns.append(turn)
        self.index += 1
        if turn.sender != "execution" and position > 1 and prompts.FINISH in turn.content:
            self.done = self.finished = True
        elif self.index >= self.max_turns:
            self.done = True

    def _execute(self, text: str) -> None:
        """Run the calls of an agent message and add the execution's answer."""
        self.process.append(text)
        try:
            calls = parse_calls(text)
        except CallSyntaxError as exc:
            self._note(self.malformed, text, str(exc))
            self._add(Turn("execution", "agent", prompts.MULTI_STEP_NOT_A_CALL))
            return
        results = []
        for call in calls:
            outcome = self.scenario.execute(call)
            if outcome.malformed:
                self._note(self.malformed, call.render(), outcome.error)
            elif outcome.error is not None:
                self._note(self.errors, call.render(), outcome.error)
            else:
                self.executed.append(call.render())
            results.append(_as_json(outcome.for_model()))
        self._add(Turn("execution", "agent", str(results)))

    def reject(self, output: Any, reason: str) -> None:
        """Record a saved output of the wrong shape: nothing ran, the sample is malformed."""
        self._note(self.malformed, repr(output), reason)

    def _note(self, log: list[dict[str, Any]], text: str, error: str | None) -> None:
        log.append({"index": self.index, "text": text[:_LOGGED_CHARS], "error": error})

    def _history(self, execution_prefix: str) -> str:
        prefixes = {"user": "user:", "agent": "agent:", "execution": execution_prefix}
        return "".join(f"{prefixes[t.sender]}{t.content}\n" for t in self.turns)

    def _functions(self) -> str:
        return json.dumps(self.entry.functions, ensure_ascii=False)


class MultiStepEpisode(Episode):
    def __post_init__(self) -> None:
        super().__post_init__()
        self.turns.append(Turn("user", "agent", self.entry.question))

    def needs(self) -> Literal["agent"] | None:
        return None if self.done else "agent"

    def agent_messages(self) -> list[Message]:
        user = prompts.MULTI_STEP_USER.format(
            functions=self._functions(), history=self._history("execution result:")
        )
        return [
            {"role": "system", "content": prompts.MULTI_STEP_SYSTEM},
            {"role": "user", "content": user},
        ]

    def feed_agent(self, text: str) -> None:
        self._add(Turn("agent", "execution", text))
        if not self.done:
            self._execute(text)

    def output(self) -> list[str]:
        """The agent's messages in order: the saved-predictions format."""
        return [t.content for t in self.turns if t.sender == "agent"]


class MultiTurnEpisode(Episode):
    def needs(self) -> Literal["agent", "user"] | None:
        if self.done:
            return None
        if not self.turns:
            return "user"
        return "agent" if self.turns[-1].recipient == "agent" else "user"

    def agent_messages(self) -> list[Message]:
        classes = self.entry.involved_classes
        rules = prompts.TRAVEL_RULES if "Travel" in classes else prompts.PHONE_RULES
        user = prompts.MULTI_TURN_USER.format(
            functions=self._functions(), history=self._history("execution:")
        )
        return [
            {"role": "system", "content": prompts.MULTI_TURN_SYSTEM + rules},
            {"role": "user", "content": user},
        ]

    def user_messages(self) -> list[Message]:
        """The simulated user's chat: its instruction, then only the agent's text replies
        (as the user-side `user` role) and its own lines (as `assistant`)."""
        phone = "BaseApi" in self.entry.involved_classes
        system = (prompts.USER_PHONE if phone else prompts.USER_TRAVEL).format(
            instruction=self.entry.question
        )
        chat: list[Message] = [
            {"role": "system", "content": system},
            {"role": "user", "content": prompts.USER_OPENING},
        ]
        for turn in self.turns:
            if turn.sender == "user":
                chat.append({"role": "assistant", "content": turn.content})
            elif turn.recipient == "user":
                chat.append({"role": "user", "content": turn.content})
        return chat

    def feed_user(self, text: str) -> None:
        if not self.turns:  # the opening message is not counted, as upstream
            self.turns.append(Turn("user", "agent", text))
        else:
            self._add(Turn("user", "agent", text))

    def feed_agent(self, text: str) -> None:
        recipient: Role = "user"
        if _LOOKS_LIKE_CALLS.search(text):
            try:
                parse_calls(text)
                recipient = "execution"
            except CallSyntaxError as exc:
                self._note(self.malformed, text, f"not sent to execution: {exc}")
        self._add(Turn("agent", recipient, text))
        if recipient == "execution" and not self.done:
            self._execute(text)

    def output(self) -> list[dict[str, str]]:
        """The whole dialogue, `user` / `assistant` (the agent) / `tool` (execution results)."""
        roles = {"user": "user", "agent": "assistant", "execution": "tool"}
        return [{"role": roles[t.sender], "content": t.content} for t in self.turns]


def _as_json(value: Any) -> Any:
    """A result as the model sees it upstream (results pass through JSON)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return str(value)


AnyEpisode = MultiStepEpisode | MultiTurnEpisode


def new_episode(entry: Entry, max_turns: int) -> AnyEpisode:
    kind = MultiStepEpisode if entry.subset == "multi_step" else MultiTurnEpisode
    return kind(entry, max_turns)


def replay_episode(episode: AnyEpisode, saved: Any) -> None:
    """Re-run saved outputs on the episode's fresh apps: multi_step, the agent's messages
    (strings) in order; multi_turn, the dialogue as `{"role", "content"}` messages (`tool`
    messages are recomputed, so ignored). Stops where the live dialogue would have (FINISH,
    turn cap). An output of the wrong shape runs nothing and is logged as malformed."""
    if isinstance(episode, MultiStepEpisode):
        if not isinstance(saved, list) or not all(isinstance(m, str) for m in saved):
            episode.reject(saved, "multi_step output must be a list of strings (agent messages)")
            return
        for text in saved:
            if episode.done:
                break
            episode.feed_agent(text)
        return
    if not isinstance(saved, list) or not all(_is_message(m) for m in saved):
        episode.reject(
            saved,
            'multi_turn output must be a list of {"role", "content"} messages '
            "with role user, assistant or tool",
        )
        return
    for message in saved:
        if episode.done:
            break
        if message["role"] == "user":
            episode.feed_user(message["content"])
        elif message["role"] == "assistant":
            episode.feed_agent(message["content"])


def _is_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("role") in ("user", "assistant", "tool")
        and isinstance(value.get("content"), str)
    )
