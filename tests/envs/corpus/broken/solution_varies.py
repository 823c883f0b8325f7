# expect: deterministic
"""solution() rotates its order on every call, "to vary the demonstrations": each order
solves, but the same seed never gives the same reference episode twice."""

import random


class VariedDemoEnv:
    demos = 0
    max_turns = 10

    def reset(self, seed=None):
        self.items = random.Random(seed).sample(["apple", "bread", "cheese", "dates", "eggs"], 3)
        self.bought = set()
        return f"Buy {', '.join(self.items)} (one per turn, any order).", {}

    def step(self, action):
        item = action.strip()
        if item in self.items:
            self.bought.add(item)
        done = self.bought == set(self.items)
        return f"Basket: {sorted(self.bought)}", len(self.bought) / 3, done, False, {}

    def solution(self):
        VariedDemoEnv.demos += 1
        shift = VariedDemoEnv.demos % 3
        return self.items[shift:] + self.items[:shift]

    def close(self):
        pass
