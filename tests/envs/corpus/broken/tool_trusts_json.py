# expect: invalid_action_handled
"""A tool env that parses every action with json.loads and no guard: text that is not JSON
raises instead of being answered with an error observation."""

import json
import random


class TrustingToolsEnv:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "guess",
                "description": "Guess the hidden number.",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"],
                },
            },
        }
    ]
    max_turns = 10

    def reset(self, seed=None):
        self.secret = random.Random(seed).randint(1, 20)
        self.turns = 0
        return "Guess a number from 1 to 20.", {}

    def step(self, action):
        self.turns += 1
        call = json.loads(action)
        n = call["arguments"]["n"]
        if n == self.secret:
            return "yes", 1.0, True, False, {}
        return ("higher" if n < self.secret else "lower"), 0.0, False, self.turns >= 10, {}

    def solution(self):
        return [
            json.dumps({"name": "guess", "arguments": {"n": 10}}),
            json.dumps({"name": "guess", "arguments": {"n": self.secret}}),
        ]

    def close(self):
        pass
