# expect: no_free_credit
"""A stock-take tool env that pays for activity: every tool call, useful or not, adds to the
reward, so random calls collect most of the credit the real count earns."""

import json
import random

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "open_bin",
            "description": "Look inside a bin.",
            "parameters": {
                "type": "object",
                "properties": {"bin": {"type": "integer"}},
                "required": ["bin"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "report_total",
            "description": "Report the number of widgets in all bins.",
            "parameters": {
                "type": "object",
                "properties": {"total": {"type": "integer"}},
                "required": ["total"],
            },
        },
    },
]


class StockTakeEnv:
    tools = TOOLS
    max_turns = 10

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.bins = [rng.randint(0, 9) for _ in range(4)]
        self.calls = 0
        return "Four bins (0-3) hold widgets. Count them all and report the total.", {}

    def step(self, action):
        self.calls += 1
        out_of_turns = self.calls >= self.max_turns
        # "Engagement" credit: 0.15 per call, up to 0.9, whatever the call did.
        credit = min(0.9, 0.15 * self.calls)
        try:
            call = json.loads(action)
            name, args = call["name"], call["arguments"]
        except (ValueError, KeyError, TypeError):
            return "Not a tool call.", credit, out_of_turns, False, {}
        if name == "open_bin" and args.get("bin") in range(4):
            return f"{self.bins[args['bin']]} widgets", credit, out_of_turns, False, {}
        if name == "report_total":
            if args.get("total") == sum(self.bins):
                return "Correct.", 1.0, True, False, {}
            return "Wrong total.", credit, out_of_turns, False, {}
        return "Unknown tool or bin.", credit, out_of_turns, False, {}

    def solution(self):
        calls = [{"name": "open_bin", "arguments": {"bin": b}} for b in range(4)]
        calls.append({"name": "report_total", "arguments": {"total": sum(self.bins)}})
        return [json.dumps(c) for c in calls]

    def close(self):
        pass
