"""Deduce a hidden document term from per-letter feedback (right spot / elsewhere / absent).

Code fragments are raw strings holding the generated code verbatim, with `$slots`.
"""

from __future__ import annotations

import random

from spade.selfplay.warmup.content import Content

from ._parts import Target, class_name, docstring, fill, literal, read_slots, say

_SOURCE = r"""$doc$imports

WORDS = $words


class $cls:
    metadata = $metadata
    max_turns = $turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.word = rng.choice(WORDS)
$state
        return $intro, {}

    def step(self, action):
        self.turns += 1
$read
        guess = text.lower()
        if guess == self.word:
            return $win, 1.0, True, False, {}
        if len(guess) != len(self.word):
            note = $invalid
        else:
$marks
        return note, $score, self.turns >= self.max_turns, False, {}

    def solution(self):
        return [f"\\boxed{{{self.word}}}"]

    def close(self):
        pass
"""

# Known letters: the reward is the share of positions the player has pinned down.
_KNOWN = (
    "        self.known, self.turns = set(), 0",
    r'''            marks = ""
            for i, ch in enumerate(guess):
                if ch == self.word[i]:
                    marks += ch.upper()
                    self.known.add(i)
                else:
                    marks += "?" if ch in self.word else "."
            note = f"{marks} (CAPS: right spot, ?: elsewhere, .: absent)"''',
    "$cap * len(self.known) / len(self.word)",
)
# Best guess: the reward is the most letters in place of any guess so far.
_BEST = (
    "        self.best = self.turns = 0",
    r'''            marks = [$mark for a, b in zip(guess, self.word)]
            hits = marks.count("G")
            self.best = max(self.best, round($cap * hits / len(self.word), 3))
            note = "".join(marks) + " (G right spot, Y elsewhere, - absent)"''',
    "self.best",
)
_MARKS = (
    r'"G" if a == b else "Y" if a in self.word else "-"',
    r'"G" if a == b else ("Y" if a in self.word else "-")',
)
_INTROS = (
    r'f"Guess the hidden {len(self.word)}-letter word; candidates: {WORDS}. '
    r'Reply \\boxed{{word}}."',
    r'"Which of these words is hidden? " + ", ".join(WORDS) + ". Guess with \\boxed{word}."',
    r'f"Find the secret word (candidates: {WORDS}); answer \\boxed{{word}} each turn."',
)


_KIT_SOURCE = r"""$doc
WORDS = $words


class $cls(TextScaffold):
    metadata = $metadata
    max_turns = $turns

    def setup(self, rng):
        self.word = rng.choice(WORDS)$state
        return $intro

    def act(self, command):
        guess = command.lower()
        if guess == self.word:
            return $win, 1.0
        if len(guess) != len(self.word):
            return $invalid, None
$marks
        return note, $score

    def solution(self):
        return [f"\\boxed{{{self.word}}}"]
"""

# Known letters: progress is the share of positions the player has pinned down.
_KIT_KNOWN = (
    "\n        self.known = set()",
    r'''        marks = ""
        for i, ch in enumerate(guess):
            if ch == self.word[i]:
                marks += ch.upper()
                self.known.add(i)
            else:
                marks += "?" if ch in self.word else "."
        note = f"{marks} (CAPS: right spot, ?: elsewhere, .: absent)"''',
    "$cap * len(self.known) / len(self.word)",
)
# Best guess: progress is this guess's letters in place (the scaffold keeps the best).
_KIT_BEST = (
    "",
    r'''        marks = [$mark for a, b in zip(guess, self.word)]
        note = "".join(marks) + " (G right spot, Y elsewhere, - absent)"''',
    '$cap * marks.count("G") / len(self.word)',
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    return fill(_SOURCE, **_slots(rng, content, target, kit=False))


def build_kit(rng: random.Random, content: Content, target: Target) -> str:
    """The same env as `build` on the text-env scaffold: the design only."""
    return fill(_KIT_SOURCE, **_slots(rng, content, target, kit=True))


def _slots(rng: random.Random, content: Content, target: Target, *, kit: bool) -> dict[str, object]:
    """The slots of `_SOURCE` (with a reader) or, with `kit`, of `_KIT_SOURCE`. The draws
    from `rng` keep their order, so a seed still gives the same env."""
    count = int(target.pick(5, 7, 9))
    pool = [t for t in content.terms if 4 <= len(t) <= 8]
    slots = {} if kit else read_slots(rng)
    state, marks, score = rng.choice([_KIT_KNOWN, _KIT_BEST] if kit else [_KNOWN, _BEST])
    # The plain env draws its intro here, the kit with the other slots below.
    intro = None if kit else rng.choice(_INTROS)
    return slots | dict(
        doc=docstring(rng, "Deduce a hidden word from letter feedback.", "A word-guessing game."),
        words=literal(pool[:count]),
        cls=class_name(content, rng.choice(["Word", "Letters", "Wordle", "Term"])),
        metadata=target.metadata(),
        turns=int(target.pick(8, 7, 6)),
        state=state,
        intro=intro or rng.choice(_INTROS),
        win=say(rng, '"Correct!"', '"You found the word!"', '"Solved."'),
        invalid=say(rng, 'f"Use {len(self.word)} letters."', '"Wrong length."'),
        marks=marks,
        mark=rng.choice(_MARKS),
        score=score,
        cap=rng.choice([0.9, 0.8, 0.7]),
    )


def fits(content: Content) -> bool:
    return len([t for t in content.terms if 4 <= len(t) <= 8]) >= 5


HINTS = (
    "Pick guesses that split the remaining candidates: keep letters marked in the right spot, "
    "move letters marked elsewhere, and drop every candidate that uses an absent letter.",
    "After each reply, cross out the candidates that would have produced different marks; "
    "then guess one of those still possible.",
    "Compare the candidates letter by letter first, and guess the one whose letters tell the "
    "others apart best.",
)
