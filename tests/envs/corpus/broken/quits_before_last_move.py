# expect: solution_solves
"""The env ends the episode after three moves whatever happens, but the solution needs four."""

import random


class EarlyStopEnv:
    max_turns = 6

    def reset(self, seed=None):
        self.code = random.Random(seed).sample("WXYZ", 4)
        self.entered = []
        return "Enter the four symbols W, X, Y, Z in the order on the note: " + "".join(
            self.code
        ), {}

    def step(self, action):
        self.entered.append(action.strip())
        right = self.entered == self.code[: len(self.entered)]
        progress = len(self.entered) / 4 if right else 0.0
        done = self.entered == self.code
        return "ok", 1.0 if done else progress, done or len(self.entered) >= 3, False, {}

    def solution(self):
        return list(self.code)

    def close(self):
        pass
