# expect: multi_turn
"""A one-shot quiz: one question, one answer, and the episode is over, right or wrong. Every
play of it is a coin flip between 0 and 1: no multi-turn signal to learn from."""

import random
import re


class ArithmeticQuizEnv:
    max_turns = 3

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.a, self.b = rng.randint(10, 99), rng.randint(10, 99)
        return f"What is {self.a} + {self.b}? Answer as \\boxed{{N}}.", {}

    def step(self, action):
        match = re.search(r"\\boxed\{(-?\d+)\}", action)
        right = match is not None and int(match.group(1)) == self.a + self.b
        return ("Correct." if right else "Wrong."), float(right), True, False, {}

    def solution(self):
        return [f"\\boxed{{{self.a + self.b}}}"]

    def close(self):
        pass
