"""Mastermind: crack a hidden colour code from exact/colour-only peg feedback (deduction).

Difficulty levels add colours and pegs; level 0 is a 2-peg code in 3 colours."""

import itertools
import math
import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")

# Difficulty levels: (colours, code length, guess budget). The top level is the original
# task; level 0 fits a short episode.
LEVELS = [("RGB", 2, 6), ("RGBY", 3, 7), ("RGBYO", 3, 8), ("RGBYO", 4, 9), ("RGBYOP", 4, 10)]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def score(guess: str, code: str) -> tuple:
    """Return (exact, colour_only): right colour in the right place / in the wrong place."""
    exact = sum(g == c for g, c in zip(guess, code))
    common = sum(min(guess.count(col), code.count(col)) for col in set(guess))
    return exact, common - exact


class CodeBreakerEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "train",
        "skill": "deduction",
        "difficulty": "medium",
        "hint": "Keep track of every code that is still consistent with all the feedback so "
        "far and only ever guess one of them. Early guesses that use two or three colours in "
        "repeated blocks tell you how many of each colour the code holds; later guesses "
        "should pin down positions.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][2]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.colours, self.length, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.code = "".join(self._rng.choice(self.colours) for _ in range(self.length))
        self.candidates = self._all_codes()
        self.turns = 0
        obs = (
            f"A secret code of {self.length} pegs hides behind a screen. Each peg is one of the "
            f"colours {', '.join(self.colours)} (repeats allowed). After each guess you learn how "
            "many pegs have the right colour in the right place (exact) and how many more have "
            "a right colour in the wrong place (colour-only). You have "
            f"{self.max_turns} guesses. Reply with a guess such as "
            f"\\boxed{{{self.colours[: self.length]}}}."
        )
        return obs, {"colours": self.colours, "length": self.length}

    def _all_codes(self) -> list:
        return ["".join(p) for p in itertools.product(self.colours, repeat=self.length)]

    def _progress(self) -> float:
        # Partial credit: the share of the code space (on a log scale) ruled out so far.
        total = len(self.colours) ** self.length
        return 0.9 * (1 - math.log(len(self.candidates)) / math.log(total))

    def _parse(self, action: str):
        found = _BOXED.findall(action)
        if not found:
            return None
        guess = re.sub(r"[\s,]", "", found[-1]).upper()
        if len(guess) == self.length and all(ch in self.colours for ch in guess):
            return guess
        return None

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        guess = self._parse(action)
        if guess is None:
            example = self.colours[0] * 2 + self.colours[1 : self.length - 1]
            obs = (
                f"Invalid guess: write {self.length} letters from {self.colours}, e.g. "
                f"\\boxed{{{example}}}."
            )
        elif guess == self.code:
            return f"{guess}: cracked it in {self.turns} guesses!", 1.0, True, False, info
        else:
            exact, colour_only = score(guess, self.code)
            self.candidates = [
                c for c in self.candidates if score(guess, c) == (exact, colour_only)
            ]
            obs = f"{guess}: exact {exact}, colour-only {colour_only}."
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        out_of_turns = self.turns >= self.max_turns
        if out_of_turns:
            obs += f" Out of guesses; the code was {self.code}."
        return obs, round(self._progress(), 4), out_of_turns, False, info

    def solution(self):
        # Always guess the first code that agrees with every answer received so far.
        candidates = self._all_codes()
        actions = []
        while True:
            guess = candidates[0]
            actions.append(f"\\boxed{{{guess}}}")
            if guess == self.code:
                return actions
            feedback = score(guess, self.code)
            candidates = [c for c in candidates if score(guess, c) == feedback]

    def close(self):
        pass
