# expect: step_types
"""Progress as an exact fractions.Fraction on the correct moves: a reward must be a number
type (int or float), so the solution's steps break the contract while probes (0.0) do not."""

import random
from fractions import Fraction


class ExactProgressEnv:
    max_turns = 10

    def reset(self, seed=None):
        self.word = random.Random(seed).choice(["lamp", "desk", "door", "rug"])
        self.spelled = 0
        return f"Spell '{self.word}' one letter per turn.", {}

    def step(self, action):
        if action.strip() != self.word[self.spelled]:
            return "Not the next letter.", 0.0, False, False, {}
        self.spelled += 1
        done = self.spelled == len(self.word)
        return "Good.", Fraction(self.spelled, len(self.word)), done, False, {}

    def solution(self):
        return list(self.word)

    def close(self):
        pass
