"""Tool use: triage a queue of support tickets. The first wrong category ends the shift.

The queue is a list walked by index: once the last ticket is triaged the episode is over, and
a further step() runs past the end of the list and raises IndexError. That is allowed: no
player steps an episode that has ended.
"""

import json
import random

CATEGORIES = ["billing", "bug", "access", "feature"]
TEMPLATES = {
    "billing": ["I was charged twice for {x}.", "My invoice for {x} shows the wrong amount."],
    "bug": ["The {x} page crashes when I click save.", "Exporting {x} gives an empty file."],
    "access": ["I cannot log in to {x} since the reset.", "My {x} account is locked."],
    "feature": ["Could {x} support dark mode?", "Please add a CSV export to {x}."],
}
PRODUCTS = ["Ledger", "Atlas", "Pulse", "Quill", "Harbor"]


class TicketTriageEnv:
    metadata = {
        "kind": "tool_use",
        "skill": "classification",
        "difficulty": "easy",
        "hint": "Read each ticket before you categorise it.",
    }
    tools = [
        {
            "type": "function",
            "function": {
                "name": "read_ticket",
                "description": "Show the ticket at the head of the queue.",
                "parameters": {"type": "object"},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "categorise",
                "description": "File the ticket at the head of the queue.",
                "parameters": {
                    "type": "object",
                    "required": ["ticket_id", "category"],
                    "properties": {
                        "ticket_id": {"type": "string"},
                        "category": {"type": "string", "enum": CATEGORIES},
                    },
                },
            },
        },
    ]

    def __init__(self, max_turns=16):
        self.max_turns = max_turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.queue = []
        for number in range(rng.randint(3, 5)):
            category = rng.choice(CATEGORIES)
            text = rng.choice(TEMPLATES[category]).format(x=rng.choice(PRODUCTS))
            self.queue.append({"id": f"T-{100 + number}", "text": text, "category": category})
        self.head = 0
        self.turns = 0
        return f"{len(self.queue)} tickets are waiting. Read and categorise each in turn.", {}

    def step(self, action):
        ticket = self.queue[self.head]  # IndexError once the queue is done: episode over
        self.turns += 1
        progress = self.head / len(self.queue)
        out = self.turns >= self.max_turns
        try:
            call = json.loads(action)
            name, arguments = call["name"], call.get("arguments", {})
        except (json.JSONDecodeError, TypeError, KeyError, AttributeError):
            return "Error: call a tool with JSON.", progress, False, out, {}
        if name == "read_ticket":
            return f"{ticket['id']}: {ticket['text']}", progress, False, out, {}
        if name != "categorise" or not isinstance(arguments, dict):
            return f"Error: no tool {name!r}.", progress, False, out, {}
        if arguments.get("ticket_id") != ticket["id"]:
            return f"Error: the head of the queue is {ticket['id']}.", progress, False, out, {}
        if arguments.get("category") != ticket["category"]:
            return "Misfiled. Your shift is over.", progress, True, False, {}
        self.head += 1
        if self.head == len(self.queue):
            return "Queue empty.", 1.0, True, False, {}
        return "Filed.", self.head / len(self.queue), False, out, {}

    def solution(self):
        calls = []
        for ticket in self.queue:
            calls.append({"name": "read_ticket", "arguments": {}})
            calls.append(
                {
                    "name": "categorise",
                    "arguments": {"ticket_id": ticket["id"], "category": ticket["category"]},
                }
            )
        return [json.dumps(call) for call in calls]

    def close(self):
        pass
