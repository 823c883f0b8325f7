# expect: multi_turn
"""A tool env with one tool, submit_answer, which ends the episode on any call. Malformed text
gets an error observation and another try, but every well-formed call is final: one-shot."""

import json
import random

CAPITALS = {
    "France": "Paris",
    "Peru": "Lima",
    "Kenya": "Nairobi",
    "Japan": "Tokyo",
    "Chile": "Santiago",
    "Egypt": "Cairo",
    "Canada": "Ottawa",
}


class SingleSubmitEnv:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "submit_answer",
                "description": "Submit the capital city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }
    ]
    max_turns = 5

    def reset(self, seed=None):
        self.country = random.Random(seed).choice(sorted(CAPITALS))
        self.turns = 0
        return f"What is the capital of {self.country}? Call submit_answer.", {}

    def step(self, action):
        self.turns += 1
        try:
            call = json.loads(action)
            city = call["arguments"]["city"]
        except (ValueError, TypeError, KeyError):
            return "Error: call submit_answer with JSON.", 0.0, False, self.turns >= 5, {}
        right = str(city).strip().lower() == CAPITALS[self.country].lower()
        return ("Correct." if right else "Wrong."), 1.0 if right else 0.0, True, False, {}

    def solution(self):
        city = CAPITALS[self.country]
        return [json.dumps({"name": "submit_answer", "arguments": {"city": city}})]

    def close(self):
        pass
