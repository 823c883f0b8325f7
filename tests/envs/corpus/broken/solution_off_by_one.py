# expect: solution_solves
"""The reference solution stops one move short of the goal."""

import random


class ShortWalkEnv:
    max_turns = 20

    def reset(self, seed=None):
        self.goal = random.Random(seed).randint(3, 9)
        self.position = 0
        return f"Walk to square {self.goal}: say 'step' to move one square.", {}

    def step(self, action):
        if action.strip() == "step":
            self.position += 1
        done = self.position == self.goal
        return f"Square {self.position}.", self.position / self.goal, done, False, {}

    def solution(self):
        return ["step"] * (self.goal - 1)

    def close(self):
        pass
