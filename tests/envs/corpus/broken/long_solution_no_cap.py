# expect: solution_solves
"""No max_turns, and a solution of 40 moves: more than the turn cap (30) any player gets, so
the env can never be solved in play."""

import random


class LongHaulEnv:
    def reset(self, seed=None):
        self.distance = 40 + random.Random(seed).randint(0, 5)
        self.walked = 0
        return f"The village is {self.distance} steps away. Say 'walk' for each step.", {}

    def step(self, action):
        if action.strip() == "walk":
            self.walked += 1
        done = self.walked == self.distance
        return f"{self.distance - self.walked} to go.", self.walked / self.distance, done, False, {}

    def solution(self):
        return ["walk"] * self.distance

    def close(self):
        pass
