# expect: ends_within_max_turns
"""The budget check uses '>' where it means '>=': the env ends its episodes one turn after the
max_turns it declares."""

import random


class OffByOneEnv:
    def __init__(self, max_turns=8):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.secret = random.Random(seed).randint(1, 64)
        self.turns = 0
        return "Find the number between 1 and 64; answer with the number alone.", {}

    def step(self, action):
        self.turns += 1
        guess = int(action) if action.strip().isdigit() else 0
        if guess == self.secret:
            return "Found.", 1.0, True, False, {}
        hint = "higher" if guess < self.secret else "lower"
        return hint, 0.0, self.turns > self.max_turns, False, {}

    def solution(self):
        low, high, moves = 1, 64, []
        while True:
            middle = (low + high) // 2
            moves.append(str(middle))
            if middle == self.secret:
                return moves
            low, high = (middle + 1, high) if middle < self.secret else (low, middle - 1)

    def close(self):
        pass
