"""An env class that keeps its state in __slots__ (no instance __dict__).

Hidden information: the comfortable temperature. Each setting is answered with "too cold" or
"too warm", so a player bisects; the privileged solution sets it in one action.
"""

import random


class SlottedThermostatEnv:
    __slots__ = ("target", "low", "high", "turns")
    max_turns = 10  # a class attribute, not a slot
    metadata = {
        "kind": "game",
        "skill": "search",
        "difficulty": "easy",
        "hint": "Halve the range of possible temperatures with every setting.",
    }

    def reset(self, seed=None):
        self.target = random.Random(seed).randint(16, 28)
        self.low, self.high = 10, 34
        self.turns = 0
        return (
            "Find the temperature the tenant likes (10 to 34 °C). Set it with \\boxed{set T}."
        ), {}

    def step(self, action):
        self.turns += 1
        digits = "".join(ch for ch in action if ch.isdigit())
        if not action.startswith("\\boxed{set") or not digits:
            return "Use \\boxed{set T}.", self._closeness(), False, self._out(), {}
        value = int(digits)
        if value == self.target:
            return f"{value} °C. The tenant is happy.", 1.0, True, False, {}
        if value < self.target:
            self.low = max(self.low, value + 1)
            feedback = "too cold"
        else:
            self.high = min(self.high, value - 1)
            feedback = "too warm"
        return f"{value} °C is {feedback}.", self._closeness(), False, self._out(), {}

    def _closeness(self):
        return round(0.9 * (1 - (self.high - self.low) / 24), 4)

    def _out(self):
        return self.turns >= self.max_turns

    def solution(self):
        return [f"\\boxed{{set {self.target}}}"]

    def close(self):
        pass
