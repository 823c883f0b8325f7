# expect: solution_solves
"""Reaching the goal is reported as truncated=True, not terminated: the episode never counts
as solved."""


class TruncatedWinEnv:
    max_turns = 10

    def reset(self, seed=None):
        self.lit = 0
        return "Light the three lamps: say 'light' three times.", {}

    def step(self, action):
        if action.strip() == "light":
            self.lit += 1
        won = self.lit == 3
        return f"{self.lit} lit.", self.lit / 3, False, won, {}

    def solution(self):
        return ["light"] * 3

    def close(self):
        pass
