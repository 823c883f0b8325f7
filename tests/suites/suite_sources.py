"""Small env sources for the suite tests: one valid, one near-duplicate of it, one invalid."""

from __future__ import annotations

from pathlib import Path

SPELL = '''"""Spell a hidden three-letter animal, one letter per turn."""

import random
import re

WORDS = ["cat", "dog", "owl", "yak", "emu", "ant", "bee", "eel"]
_BOXED = re.compile(r"\\\\boxed\\{(\\w)\\}")


class SpellEnv:
    metadata = {"kind": "reasoning", "skill": "recall", "difficulty": "easy",
                "hint": "The animal is one of: " + ", ".join(WORDS) + "."}

    def __init__(self, max_turns=8):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.word = random.Random(seed).choice(WORDS)
        self.done = 0
        self.turns = 0
        return "Spell the hidden animal one letter per turn, as \\\\boxed{x}.", {}

    def step(self, action):
        if self.done == len(self.word):
            return "Already spelled.", 1.0, True, False, {}
        self.turns += 1
        match = _BOXED.search(action)
        if match and match.group(1) == self.word[self.done]:
            self.done += 1
        if self.done == len(self.word):
            return "Spelled!", 1.0, True, False, {}
        truncated = self.turns >= self.max_turns
        return f"{self.done} letters right.", 0.3 * self.done, False, truncated, {}

    def solution(self):
        return ["\\\\boxed{%s}" % letter for letter in self.word]

    def close(self):
        pass
'''

# The same env with another docstring, extra comments and different layout: a near-duplicate.
SPELL_RESTYLED = (
    SPELL.replace(
        '"""Spell a hidden three-letter animal, one letter per turn."""',
        "'''A different docstring.'''\n# a comment that changes nothing",
    )
    .replace("        self.done = 0\n", "        self.done = 0  # letters spelled so far\n\n")
    .replace('return f"{self.done} letters right."', 'return (f"{self.done} letters right.")')
)

# A valid-looking env whose solution() does not solve it.
BROKEN = SPELL.replace("class SpellEnv", "class BrokenEnv").replace(
    "for letter in self.word]", "for letter in 'zzz']"
)

SUITE = "demo"
VERSION = "1.2.0"
CREATED = "2025-01-02T03:04:05Z"


def write_sources(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spell.py").write_text(SPELL)
    (folder / "spell_restyled.py").write_text(SPELL_RESTYLED)
    (folder / "broken.py").write_text(BROKEN)
    return folder
