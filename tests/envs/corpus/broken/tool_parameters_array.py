# expect: tool_schemas
"""A tool whose parameters are an array: OpenAI-style parameters must be an object schema."""

import json
import random


class StockToolsEnv:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "count",
                "description": "Count an item in the stockroom.",
                "parameters": {"type": "array", "items": {"type": "string"}},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "report",
                "description": "Report the count of an item.",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"],
                },
            },
        },
    ]
    max_turns = 6

    def reset(self, seed=None):
        self.n = random.Random(seed).randint(3, 30)
        return "Count the boxes, then report the number.", {}

    def step(self, action):
        try:
            call = json.loads(action)
            name, arguments = call["name"], call.get("arguments")
        except (ValueError, TypeError, KeyError, AttributeError):
            return "Error: JSON tool call expected.", 0.0, False, False, {}
        if name == "count":
            return f"{self.n} boxes", 0.5, False, False, {}
        if name == "report" and isinstance(arguments, dict):
            right = arguments.get("n") == self.n
            return "ok" if right else "no", 1.0 if right else 0.0, True, False, {}
        return "Error: unknown tool.", 0.0, False, False, {}

    def solution(self):
        return [
            json.dumps({"name": "count", "arguments": ["boxes"]}),
            json.dumps({"name": "report", "arguments": {"n": self.n}}),
        ]

    def close(self):
        pass
