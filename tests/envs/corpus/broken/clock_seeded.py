# expect: deterministic
"""Seeds the module generator from the clock and ignores the seed it was given."""

import random
import time


class ClockSeededEnv:
    max_turns = 10

    def reset(self, seed=None):
        random.seed(time.perf_counter_ns())
        self.cards = random.sample(range(1, 1000), 6)
        self.turns = 0
        return f"Cards: {self.cards}. Say the largest, then the smallest.", {}

    def step(self, action):
        self.turns += 1
        wanted = [max(self.cards), min(self.cards)]
        said = action.strip()
        if self.turns <= 2 and said == str(wanted[self.turns - 1]):
            return "right", self.turns / 2, self.turns == 2, False, {}
        return "wrong", 0.0, False, self.turns >= self.max_turns, {}

    def solution(self):
        return [str(max(self.cards)), str(min(self.cards))]

    def close(self):
        pass
