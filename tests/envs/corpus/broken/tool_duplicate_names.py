# expect: tool_schemas
"""Two tools with the same name: a call cannot say which one it means."""

import json


def tool(name, description):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}},
        },
    }


class DuplicateToolsEnv:
    tools = [tool("move", "Move a piece forward."), tool("move", "Move a piece back.")]
    max_turns = 8

    def reset(self, seed=None):
        self.position = 0
        return "Move the piece to square 2.", {}

    def step(self, action):
        try:
            call = json.loads(action)
            x = int(call["arguments"]["x"])
        except (ValueError, TypeError, KeyError):
            return "Error: bad call.", 0.0, False, False, {}
        self.position += x
        done = self.position == 2
        return f"at {self.position}", 1.0 if done else 0.0, done, False, {}

    def solution(self):
        return [json.dumps({"name": "move", "arguments": {"x": 1}})] * 2

    def close(self):
        pass
