"""A seeded random agent: plausible actions, no strategy.

It shows how far luck gets on an env: a good env is rarely solved by it. Text envs get
`\\boxed{...}` answers made of short tokens from the first observation, numbers and letters,
or copies of a `\\boxed{...}` example it shows with the placeholders filled that way; tool
envs get calls of a random tool with arguments that fit its JSON schema (strings from the
observation, small integers, booleans, enum values). Same seed, same actions.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import string
from collections.abc import Callable
from typing import Any

from spade.envs.tools import tool_call_action

RANDOM_AGENT = "random-v1"
"""Recorded in manifests: bump it whenever the agent's behaviour changes."""

_TOKEN = re.compile(r"[^\s,;:()\[\]{}<>\"'`|\\]+")
_BOXED = re.compile(r"\\boxed\{([^{}]+)\}")
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*$")
_MAX_TOKEN = 40
_MAX_DEPTH = 3
_LETTERS = list(string.ascii_lowercase)
# Where a token comes from: the observation's words, a number, a letter.
_SOURCES = ("word", "word", "word", "number", "number", "letter")


def agent_seed(episode_seed: int) -> int:
    """The agent's own seed for an episode. Hashing keeps it apart from the env's seed: an env
    seeding `random.Random(seed)` and an agent with the same seed would draw the same stream,
    and that correlation could solve episodes by accident."""
    digest = hashlib.sha256(f"{RANDOM_AGENT}\n{episode_seed}".encode()).hexdigest()
    return int(digest[:16], 16)


def vocabulary(observation: str) -> list[str]:
    """The short tokens of an observation, each once, in order of appearance."""
    words: list[str] = []
    for match in _TOKEN.findall(observation):
        word = match.rstrip(".!?")
        if 0 < len(word) <= _MAX_TOKEN and word not in words and word != "boxed":
            words.append(word)
    return words


def templates(observation: str) -> list[str]:
    """The contents of the `\\boxed{...}` examples an observation shows, each once."""
    return list(dict.fromkeys(m.strip() for m in _BOXED.findall(observation) if m.strip()))


class RandomAgent:
    """Call `begin` with the first observation, then `act` once per turn."""

    def __init__(self, seed: int, tools: list[dict[str, Any]] | None = None) -> None:
        self.rng = random.Random(seed)
        self.tools = tools or None
        self.words: list[str] = []
        self.templates: list[str] = []
        self.numbers: list[int] = []
        self.high = 10

    def begin(self, observation: str) -> None:
        self.words = vocabulary(observation)
        self.templates = templates(observation)
        self.numbers = [int(w) for w in self.words if w.lstrip("-").isdigit() and len(w) < 10]
        # Random numbers span the observation's own scale (at most 1000), at least 0..10.
        self.high = min(1000, max([10, *self.numbers]))

    def _token(self) -> str:
        source = self.rng.choice(_SOURCES)
        if source == "word" and self.words:
            return self.rng.choice(self.words)
        if source == "letter":
            return self.rng.choice(_LETTERS)
        return str(self.rng.randint(0, self.high))

    def act(self) -> str:
        return self._tool_call() if self.tools else self._boxed_answer()

    def _boxed_answer(self) -> str:
        if self.templates and self.rng.random() < 0.5:
            # Imitate a shown example, filling its placeholders (N, ROW, ANIMAL) at random.
            words = self.rng.choice(self.templates).split()
            answer = " ".join(self._token() if _PLACEHOLDER.match(w) else w for w in words)
        else:
            answer = " ".join(self._token() for _ in range(self.rng.choice((1, 1, 1, 2, 2, 3))))
        return "\\boxed{" + answer + "}"

    def _tool_call(self) -> str:
        assert self.tools is not None
        function = self.rng.choice(self.tools)["function"]
        return tool_call_action(function["name"], self._arguments(function["parameters"], 0))

    def _arguments(self, spec: dict[str, Any], depth: int) -> dict[str, Any]:
        required = set(spec.get("required", []))
        properties: dict[str, Any] = spec.get("properties", {})
        return {
            name: self._value(prop, depth + 1)
            for name, prop in properties.items()
            if name in required or self.rng.random() < 0.5
        }

    def _value(self, spec: Any, depth: int) -> Any:
        if not isinstance(spec, dict):
            return self._token()
        if spec.get("enum"):
            return self.rng.choice(spec["enum"])
        if "const" in spec:
            return spec["const"]
        options = spec.get("anyOf") or spec.get("oneOf")
        if options:
            return self._value(self.rng.choice(options), depth)
        kind = spec.get("type", "string")
        if isinstance(kind, list):
            kind = self.rng.choice(kind) if kind else "string"
        if kind in ("integer", "number"):
            return self._number(spec, kind == "integer")
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        if kind == "array" and depth < _MAX_DEPTH:
            length = self.rng.randint(0, 3)
            return [self._value(spec.get("items", {}), depth + 1) for _ in range(length)]
        if kind == "object" and depth < _MAX_DEPTH:
            return self._arguments(spec, depth)
        return self._token()

    def _number(self, spec: dict[str, Any], integer: bool) -> int | float:
        low = spec.get("minimum", 0)
        high = spec.get("maximum", max(low, self.high))
        high = max(low, high)
        seen = [n for n in self.numbers if low <= n <= high]
        # Numbers from the observation are likelier to mean something (ids, sizes, positions).
        if seen and self.rng.random() < 0.5:
            return self.rng.choice(seen)
        if integer:
            low, high = math.ceil(low), math.floor(high)
            return self.rng.randint(low, max(low, high))
        return round(self.rng.uniform(low, high), 2)


def random_policy(episode_seed: int, tools: list[dict[str, Any]] | None) -> Callable[[str], str]:
    """The seeded random agent as a policy for `play_actions`: it reads only the first
    observation, then answers every turn with a random plausible action."""
    agent = RandomAgent(agent_seed(episode_seed), tools)
    turns = 0

    def act(observation: str) -> str:
        nonlocal turns
        if turns == 0:
            agent.begin(observation)
        turns += 1
        return agent.act()

    return act
