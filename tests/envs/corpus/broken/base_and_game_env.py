# expect: single_env_class
"""A shared base class whose name also ends in Env: two candidate classes, which one to run?"""

import random


class BaseEnv:
    max_turns = 10

    def close(self):
        pass


class HiLoEnv(BaseEnv):
    def reset(self, seed=None):
        self.secret = random.Random(seed).randint(1, 50)
        self.turns = 0
        return "Guess 1..50 as a number.", {}

    def step(self, action):
        self.turns += 1
        guess = int(action) if action.strip().isdigit() else 0
        if guess == self.secret:
            return "yes", 1.0, True, False, {}
        hint = "higher" if guess < self.secret else "lower"
        return hint, 0.0, False, self.turns >= self.max_turns, {}

    def solution(self):
        return ["25", str(self.secret)]
