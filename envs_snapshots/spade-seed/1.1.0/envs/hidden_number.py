"""Guess a hidden integer from higher/lower feedback (binary search under a turn budget)."""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


class HiddenNumberEnv:
    metadata = {
        "kind": "game",
        "split": "train",
        "skill": "search",
        "difficulty": "easy",
        "hint": "Keep an interval [lo, hi] of values still possible and always guess its "
        "midpoint; each answer halves the interval, so ceil(log2(range)) guesses suffice.",
    }

    def __init__(self, max_turns: int = 10):
        self.max_turns = max_turns
        self._rng = random.Random()

    def reset(self, seed=None):
        self._rng = random.Random(seed)
        self.high = self._rng.choice([100, 200, 500])
        self.secret = self._rng.randint(1, self.high)
        self.lo, self.hi = 1, self.high
        self.turns = 0
        self.best = 0.0
        return (
            f"I am thinking of an integer between 1 and {self.high}. You have "
            f"{self.max_turns} guesses. Reply with one guess per turn as \\boxed{{N}}.",
            {"high": self.high},
        )

    def _progress(self) -> float:
        # Partial credit: the share of the range already ruled out by the player's guesses.
        return 0.9 * (1 - (self.hi - self.lo) / max(1, self.high - 1))

    def step(self, action):
        self.turns += 1
        match = _BOXED.search(action)
        guess = None
        if match and match.group(1).strip().lstrip("-").isdigit():
            guess = int(match.group(1).strip())
        if guess is None:
            obs = "Invalid action: reply with your guess as \\boxed{N}."
        elif guess == self.secret:
            return f"Correct! The number was {self.secret}.", 1.0, True, False, {}
        elif guess < self.secret:
            self.lo = max(self.lo, guess + 1)
            obs = f"{guess} is too low."
        else:
            self.hi = min(self.hi, guess - 1)
            obs = f"{guess} is too high."
        self.best = max(self.best, self._progress())
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        out_of_turns = self.turns >= self.max_turns
        return obs, round(self.best, 4), out_of_turns, False, {"turn": self.turns}

    def solution(self):
        lo, hi, actions = 1, self.high, []
        while True:
            mid = (lo + hi) // 2
            actions.append(f"\\boxed{{{mid}}}")
            if mid == self.secret:
                return actions
            lo, hi = (mid + 1, hi) if mid < self.secret else (lo, mid - 1)

    def close(self):
        pass
