"""Tool use with hidden information: open a safe whose code is spread over four notes.

`solution()` knows the code and opens the safe in one call; a player reads the notes first,
and a wrong code is answered with feedback, so the episode goes on.
"""

import json
import random


class SafeNotesEnv:
    metadata = {
        "kind": "tool_use",
        "skill": "information gathering",
        "difficulty": "easy",
        "hint": "Every note holds one digit and its position.",
    }
    tools = [
        {
            "type": "function",
            "function": {
                "name": "read_note",
                "description": "Read one of the notes pinned to the wall.",
                "parameters": {
                    "type": "object",
                    "required": ["index"],
                    "properties": {"index": {"type": "integer", "minimum": 0, "maximum": 3}},
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "try_code",
                "description": "Type a four-digit code into the safe.",
                "parameters": {
                    "type": "object",
                    "required": ["code"],
                    "properties": {"code": {"type": "string", "pattern": "^[0-9]{4}$"}},
                },
            },
        },
    ]

    def __init__(self, max_turns=8):
        self.max_turns = max_turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.code = "".join(str(rng.randrange(10)) for _ in range(4))
        order = rng.sample(range(4), 4)
        self.notes = [f"digit {p + 1} is {self.code[p]}" for p in order]
        self.turns = 0
        return "A safe and four notes. Tools: read_note(index), try_code(code).", {}

    def step(self, action):
        self.turns += 1
        done = self.turns >= self.max_turns
        try:
            call = json.loads(action)
        except json.JSONDecodeError as error:
            return f"Error: not JSON ({error.msg}).", 0.0, False, done, {}
        if not isinstance(call, dict):
            return "Error: a tool call is a JSON object.", 0.0, False, done, {}
        arguments = call.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                arguments = None
        if not isinstance(arguments, dict):
            arguments = {}
        if call.get("name") == "read_note":
            index = arguments.get("index")
            if isinstance(index, int) and 0 <= index < 4:
                return self.notes[index], 0.0, False, done, {}
            return "Error: index must be 0..3.", 0.0, False, done, {}
        if call.get("name") == "try_code":
            code = str(arguments.get("code", ""))
            if code == self.code:
                return "Click. The safe opens.", 1.0, True, False, {}
            right = sum(a == b for a, b in zip(code, self.code, strict=False))
            return f"Wrong code ({right} digits right).", right / 8, False, done, {}
        return f"Error: unknown tool {call.get('name')!r}.", 0.0, False, done, {}

    def solution(self):
        return [json.dumps({"name": "try_code", "arguments": {"code": self.code}})]

    def close(self):
        pass
