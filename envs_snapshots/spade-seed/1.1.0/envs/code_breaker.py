"""Mastermind: crack a hidden colour code from exact/colour-only peg feedback (deduction)."""

import itertools
import math
import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
COLOURS = "RGBYOP"
LENGTH = 4


def score(guess: str, code: str) -> tuple:
    """Return (exact, colour_only): right colour in the right place / in the wrong place."""
    exact = sum(g == c for g, c in zip(guess, code))
    common = sum(min(guess.count(col), code.count(col)) for col in COLOURS)
    return exact, common - exact


class CodeBreakerEnv:
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

    def __init__(self, max_turns: int = 10):
        self.max_turns = max_turns
        self._rng = random.Random()

    def reset(self, seed=None):
        self._rng = random.Random(seed)
        self.code = "".join(self._rng.choice(COLOURS) for _ in range(LENGTH))
        self.candidates = ["".join(p) for p in itertools.product(COLOURS, repeat=LENGTH)]
        self.turns = 0
        obs = (
            f"A secret code of {LENGTH} pegs hides behind a screen. Each peg is one of the "
            f"colours {', '.join(COLOURS)} (repeats allowed). After each guess you learn how "
            "many pegs have the right colour in the right place (exact) and how many more have "
            "a right colour in the wrong place (colour-only). You have "
            f"{self.max_turns} guesses. Reply with a guess such as \\boxed{{RGBY}}."
        )
        return obs, {"colours": COLOURS, "length": LENGTH}

    def _progress(self) -> float:
        # Partial credit: the share of the code space (on a log scale) ruled out so far.
        total = len(COLOURS) ** LENGTH
        return 0.9 * (1 - math.log(len(self.candidates)) / math.log(total))

    def _parse(self, action: str):
        found = _BOXED.findall(action)
        if not found:
            return None
        guess = re.sub(r"[\s,]", "", found[-1]).upper()
        if len(guess) == LENGTH and all(ch in COLOURS for ch in guess):
            return guess
        return None

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        guess = self._parse(action)
        if guess is None:
            obs = f"Invalid guess: write {LENGTH} letters from {COLOURS}, e.g. \\boxed{{RRGB}}."
        elif guess == self.code:
            return f"{guess}: cracked it in {self.turns} guesses!", 1.0, True, False, info
        else:
            exact, colour_only = score(guess, self.code)
            self.candidates = [c for c in self.candidates if score(guess, c) == (exact, colour_only)]
            obs = f"{guess}: exact {exact}, colour-only {colour_only}."
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        out_of_turns = self.turns >= self.max_turns
        if out_of_turns:
            obs += f" Out of guesses; the code was {self.code}."
        return obs, round(self._progress(), 4), out_of_turns, False, info

    def solution(self):
        # Always guess the first code that agrees with every answer received so far.
        candidates = ["".join(p) for p in itertools.product(COLOURS, repeat=LENGTH)]
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
