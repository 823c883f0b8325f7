"""Tool use: clear the expired food out of a pantry.

State is nested: shelves (a dict) hold lists of `Item` dataclasses, each with a list of
`Batch` dataclasses. The goal is checked from the state: every expired batch in the bin, no
fresh one thrown away.
"""

import json
import random
from dataclasses import dataclass, field

SHELVES = ["top", "middle", "bottom"]
FOODS = ["rice", "oats", "lentils", "flour", "honey", "tea", "beans", "pasta", "cocoa"]


@dataclass
class Batch:
    label: str
    expires_day: int


@dataclass
class Item:
    food: str
    batches: list = field(default_factory=list)


def _tool(name, description, properties, required):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


class PantryToolsEnv:
    metadata = {
        "kind": "tool_use",
        "skill": "bookkeeping",
        "difficulty": "easy",
        "hint": "Read every shelf before throwing anything away.",
    }
    tools = [
        _tool(
            "read_shelf",
            "List the items and batches on one shelf.",
            {"shelf": {"type": "string", "enum": SHELVES}},
            ["shelf"],
        ),
        _tool(
            "discard",
            "Move one batch (by label) to the bin.",
            {"label": {"type": "string", "description": "batch label, e.g. R-3"}},
            ["label"],
        ),
        _tool("finish", "Say that the pantry is done.", {}, []),
    ]
    max_turns = 25

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.today = rng.randint(40, 60)
        self.shelves = {shelf: [] for shelf in SHELVES}
        foods = rng.sample(FOODS, 6)
        for index, food in enumerate(foods):
            item = Item(food)
            for number in range(rng.randint(1, 2)):
                day = self.today + rng.choice([-9, -3, -1, 2, 5, 30])
                item.batches.append(Batch(f"{food[0].upper()}{index}-{number}", day))
            self.shelves[SHELVES[index % 3]].append(item)
        if not self._expired():  # at least one to throw away
            self.shelves["top"][0].batches[0].expires_day = self.today - 4
        self.bin = []
        self.turns = 0
        return (
            f"Today is day {self.today}. Throw away every batch that expired before today "
            '(call tools as JSON, e.g. {"name": "read_shelf", "arguments": '
            '{"shelf": "top"}}), then call finish.'
        ), {}

    def _batches(self):
        for items in self.shelves.values():
            for item in items:
                yield from item.batches

    def _expired(self):
        return [b.label for b in self._batches() if b.expires_day < self.today]

    def _score(self):
        expired = set(self._expired())
        right = len(expired & set(self.bin))
        wrong = len(set(self.bin) - expired)
        return max(0.0, (right - wrong) / len(expired)) if expired else 1.0

    def step(self, action):
        self.turns += 1
        out_of_turns = self.turns >= self.max_turns
        try:
            call = json.loads(action)
            name, arguments = call["name"], call.get("arguments") or {}
        except (ValueError, TypeError, KeyError, AttributeError):
            return "Error: send a JSON tool call.", 0.9 * self._score(), out_of_turns, False, {}
        if name == "read_shelf" and arguments.get("shelf") in self.shelves:
            rows = [
                f"{item.food}: "
                + ", ".join(f"{b.label} (expires day {b.expires_day})" for b in item.batches)
                for item in self.shelves[arguments["shelf"]]
            ]
            observation = "\n".join(rows) or "(empty shelf)"
        elif name == "discard" and isinstance(arguments.get("label"), str):
            label = arguments["label"]
            known = {b.label for b in self._batches()}
            if label not in known:
                observation = f"Error: no batch labelled {label!r}."
            elif label in self.bin:
                observation = f"{label} is already in the bin."
            else:
                self.bin.append(label)
                observation = f"{label} is in the bin."
        elif name == "finish":
            score = self._score()
            return f"Pantry checked: score {score:.2f}.", score, True, False, {"bin": self.bin}
        else:
            observation = f"Error: unknown tool or bad arguments for {name!r}."
        return observation, 0.9 * self._score(), out_of_turns, False, {}

    def solution(self):
        calls = [{"name": "read_shelf", "arguments": {"shelf": s}} for s in SHELVES]
        calls += [{"name": "discard", "arguments": {"label": label}} for label in self._expired()]
        calls.append({"name": "finish", "arguments": {}})
        return [json.dumps(call) for call in calls]

    def close(self):
        pass
