"""Climb a word ladder: change one letter per turn, every rung a real word.

The first illegal rung (not a word, or more than one letter changed) ends the episode with the
progress made so far.
"""

import random
import re

LADDERS = [
    ["cold", "cord", "card", "ward", "warm"],
    ["head", "heal", "teal", "tell", "tall", "tail"],
    ["lead", "load", "goad", "gold"],
    ["wolf", "golf", "gold", "goad", "goat"],
    ["fish", "dish", "dash", "cash", "cast"],
]
WORDS = {word for ladder in LADDERS for word in ladder} | {
    "bold",
    "colt",
    "core",
    "dart",
    "word",
    "worm",
    "heat",
    "tent",
    "toll",
    "coal",
    "load",
    "fist",
    "wish",
    "mash",
    "cask",
    "silt",
    "well",
    "will",
    "mill",
}


def _rung(a, b):
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1


class WordLadderEnv:
    metadata = {
        "kind": "word",
        "skill": "vocabulary",
        "difficulty": "medium",
        "hint": "Work backwards from the target word too.",
    }

    def __init__(self, max_turns=8):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.ladder = random.Random(seed).choice(LADDERS)
        self.word = self.ladder[0]
        self.rungs = 0
        return (
            f"Turn {self.ladder[0].upper()} into {self.ladder[-1].upper()}, one letter at "
            "a time. Give each new word as \\boxed{word}."
        ), {}

    def _progress(self):
        target = self.ladder[-1]
        same = sum(x == y for x, y in zip(self.word, target, strict=True))
        return 0.8 * same / len(target)

    def step(self, action):
        match = re.fullmatch(r"\s*\\boxed\{([a-zA-Z]+)\}\s*", action)
        word = match.group(1).lower() if match else None
        if word is None or word not in WORDS or not _rung(self.word, word):
            return (
                f"{action.strip()[:30]!r} is not a legal rung. You fall off the ladder.",
                self._progress(),
                True,
                False,
                {"rungs": self.rungs},
            )
        self.word = word
        self.rungs += 1
        if word == self.ladder[-1]:
            return f"{word.upper()}! You reached the top.", 1.0, True, False, {}
        out = self.rungs >= self.max_turns
        return f"{word.upper()}. Next rung?", self._progress(), out, False, {}

    def solution(self):
        return [f"\\boxed{{{word}}}" for word in self.ladder[1:]]

    def close(self):
        pass
