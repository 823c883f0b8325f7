# expect: ends_within_max_turns
"""Declares max_turns = 10 but never ends an episode that goes wrong: the budget is a promise
the env does not keep."""

import random


class IgnoredBudgetEnv:
    max_turns = 10

    def reset(self, seed=None):
        self.target = random.Random(seed).choice(["north", "south", "east", "west"])
        self.asked = False
        return "Ask 'where' once, then walk in that direction.", {}

    def step(self, action):
        word = action.strip()
        if word == "where":
            self.asked = True
            return f"The wind blows from the {self.target}.", 0.5, False, False, {}
        if self.asked and word == self.target:
            return "You found the camp.", 1.0, True, False, {}
        return "You wander.", 0.5 if self.asked else 0.0, False, False, {}

    def solution(self):
        return ["where", self.target]

    def close(self):
        pass
