# expect: difficulty_levels
"""Declares five difficulty levels, but a level only renames the task: the crate to find and
the search it takes are the same at every level, so a curriculum over it teaches nothing."""

import random
import re

NAMES = ("Trainee", "Porter", "Clerk", "Foreman", "Manager")


class CrateSearchEnv:
    difficulty_levels = 5
    max_turns = 8

    def reset(self, seed=None, options=None):
        level = (options or {}).get("difficulty", 4)
        rng = random.Random(seed)
        self.crate = rng.randint(1, 16)
        self.low, self.high, self.turns = 1, 16, 0
        return (
            f"[{NAMES[level]}] One of crates 1-16 holds the parcel. Name a crate as "
            "\\boxed{N}; you hear 'higher' or 'lower'."
        ), {"level": level}

    def step(self, action):
        self.turns += 1
        out = self.turns >= self.max_turns
        match = re.search(r"\\boxed\{(\d+)\}", action)
        if not match:
            return "Name a crate as \\boxed{N}.", 0.0, out, False, {}
        guess = int(match.group(1))
        if guess == self.crate:
            return "Found it.", 1.0, True, False, {}
        if guess < self.crate:
            self.low = max(self.low, guess + 1)
        else:
            self.high = min(self.high, guess - 1)
        return ("higher" if guess < self.crate else "lower"), 0.0, out, False, {}

    def solution(self):
        low, high, moves = 1, 16, []
        while True:
            mid = (low + high) // 2
            moves.append(f"\\boxed{{{mid}}}")
            if mid == self.crate:
                return moves
            low, high = (mid + 1, high) if mid < self.crate else (low, mid - 1)

    def close(self):
        pass
