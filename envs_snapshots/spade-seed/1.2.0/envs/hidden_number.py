"""Guess a hidden integer from higher/lower feedback (binary search under a turn budget)."""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


# Difficulty levels: (ranges the secret is drawn from, turn budget). The top level is the
# original task; level 0 fits a short episode.
LEVELS = [([8], 4), ([16], 5), ([30], 6), ([50, 60], 8), ([100, 200, 500], 10)]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


class HiddenNumberEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "train",
        "skill": "search",
        "difficulty": "easy",
        "hint": "Keep an interval [lo, hi] of values still possible and always guess its "
        "midpoint; each answer halves the interval, so ceil(log2(range)) guesses suffice.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        highs, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.high = self._rng.choice(highs)
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
        # Partial credit: half the share of the range ruled out (0.9 paid random guessing ~0.5).
        return 0.5 * (1 - (self.hi - self.lo) / max(1, self.high - 1))

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
