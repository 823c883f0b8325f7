# expect: solution_returns_actions
"""solution() was left empty: no reference actions at all."""

import random


class UnfinishedEnv:
    max_turns = 10

    def reset(self, seed=None):
        self.pin = random.Random(seed).randint(1000, 9999)
        return "Enter the PIN digit by digit.", {}

    def step(self, action):
        return "beep", 0.0, False, False, {}

    def solution(self):
        return []

    def close(self):
        pass
