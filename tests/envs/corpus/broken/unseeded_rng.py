# expect: deterministic
"""The generator is built without the seed: the same seed gives a different secret each time."""

import random


class UnseededEnv:
    max_turns = 10

    def reset(self, seed=None):
        self.rng = random.Random()
        self.map_id = self.rng.getrandbits(64)
        self.secret = self.rng.randint(1, 100)
        self.turns = 0
        return f"Treasure map #{self.map_id:016x}: guess the square, 1..100.", {}

    def step(self, action):
        self.turns += 1
        guess = int(action) if action.strip().isdigit() else -1
        if guess == self.secret:
            return "yes", 1.0, True, False, {}
        hint = "higher" if guess < self.secret else "lower"
        return hint, 0.0, False, self.turns >= self.max_turns, {}

    def solution(self):
        return ["50", str(self.secret)]

    def close(self):
        pass
