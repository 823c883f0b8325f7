"""Hangman on a document sentence: a word is masked; letters reveal it, context guides it.

Code fragments are raw strings holding the generated code verbatim, with `$slots`.
"""

from __future__ import annotations

import random

from spade.selfplay.warmup.content import Content

from ._parts import Target, class_name, docstring, fill, literal, read_slots, say

_SOURCE = r"""$doc$imports

CLOZES = $clozes


class $cls:
    metadata = $metadata
    max_turns = $turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.text = rng.choice(list(CLOZES))
        self.word = rng.choice(CLOZES[self.text])
$state
        return $intro, {}

    def _masked(self):
$masked

    def step(self, action):
        self.turns += 1
$read
        guess = text.lower()
        if guess == self.word.lower():
            return $win, 1.0, True, False, {}
$letter
        return note, $score, self.turns >= self.max_turns, False, {}

    def solution(self):
        return [$answer]

    def close(self):
        pass
"""

# Revealed letters as a set of guessed letters, or as the word's pattern itself.
_STATES = (
    (
        "        self.shown, self.turns = set(), 0",
        r"""        blank = "".join(c if c in self.shown else "_" for c in self.word)
        return self.text.replace(self.word, blank)""",
        "$cap * len(self.shown & set(self.word)) / len(set(self.word))",
        "self.shown.add(guess)",
    ),
    (
        r"""        self.pattern = ["_"] * len(self.word)
        self.turns = 0""",
        '        return self.text.replace(self.word, "".join(self.pattern))',
        '$cap * (1 - self.pattern.count("_") / len(self.word))',
        r"""self.pattern = [c if c == guess else p for c, p in zip(self.word, self.pattern)]""",
    ),
)
_LETTERS = (
    r"""        if len(guess) == 1 and guess.isalpha():
            $reveal
            note = $hit_note
        else:
            note = "Not the word. " + self._masked()""",
    r"""        if len(guess) != 1:
            note = $miss_note
        else:
            $reveal
            note = self._masked()""",
)
_INTROS = (
    r'"Fill the blank: " + self._masked() + " Send \\boxed{letter} or \\boxed{word}."',
    r'f"{self._masked()} Guess a letter or the word: \\boxed{{...}}."',
)


def _clozes(content: Content, min_len: int) -> dict[str, list[str]]:
    """Up to two short sentences, each with its maskable words (lower-case, `min_len`+
    letters, at most two)."""
    found: dict[str, list[str]] = {}
    for sentence in content.sentences:
        words = [w for w in sentence.split() if len(w) >= min_len and w.isalpha() and w.islower()]
        if words and len(sentence) <= 90 and len(found) < 2:
            found[sentence] = list(dict.fromkeys(words))[:2]
    return found


def fits(content: Content) -> bool:
    return len(_clozes(content, 6)) >= 2


_KIT_SOURCE = r"""$doc
CLOZES = $clozes


class $cls(TextScaffold):
    metadata = $metadata
    max_turns = $turns

    def setup(self, rng):
        self.text = rng.choice(list(CLOZES))
        self.word = rng.choice(CLOZES[self.text])
$state
        return $intro

    def _masked(self):
$masked

    def act(self, command):
        guess = command.lower()
        if guess == self.word.lower():
            return $win, 1.0
$letter
        return note, $score

    def solution(self):
        return [$answer]
"""

# Revealed letters as a set of guessed letters, or as the word's pattern itself.
_KIT_STATES = (  # as `_STATES`, less the turn counter
    ("        self.shown = set()", *_STATES[0][1:]),
    ('        self.pattern = ["_"] * len(self.word)', *_STATES[1][1:]),
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    return fill(_SOURCE, **_slots(rng, content, target, kit=False))


def build_kit(rng: random.Random, content: Content, target: Target) -> str:
    """The same env as `build` on the text-env scaffold: the design only."""
    return fill(_KIT_SOURCE, **_slots(rng, content, target, kit=True))


def _slots(rng: random.Random, content: Content, target: Target, *, kit: bool) -> dict[str, object]:
    """The slots of `_SOURCE` (with a reader) or, with `kit`, of `_KIT_SOURCE`. The draws
    from `rng` keep their order, so a seed still gives the same env."""
    min_len = int(target.pick(6, 7, 8))
    clozes = _clozes(content, min_len)
    if len(clozes) < 2:
        clozes = _clozes(content, 6)
    slots = {} if kit else read_slots(rng)
    state, masked, score, reveal = rng.choice(_KIT_STATES if kit else _STATES)
    return slots | dict(
        doc=docstring(rng, "Find a masked word from context.", "Hangman on a sentence."),
        clozes=literal(clozes),
        cls=class_name(content, rng.choice(["Cloze", "Blank", "Hangman", "Missing"])),
        metadata=target.metadata(),
        turns=int(target.pick(10, 9, 7)),
        intro=rng.choice(_INTROS),
        win=say(rng, '"Correct!"', '"That is the word."', '"Solved!"'),
        letter=rng.choice(_LETTERS),
        state=state,
        masked=masked,
        score=score,
        reveal=reveal,
        hit_note=say(rng, "self._masked()", 'f"{self._masked()} ({guess!r} tried)"'),
        miss_note=say(rng, '"Wrong word. " + self._masked()', 'f"No. {self._masked()}"'),
        cap=rng.choice([0.9, 0.8, 0.6]),
        answer=say(rng, r'f"\\boxed{{{self.word}}}"', r'"\\boxed{%s}" % self.word'),
    )


HINTS = (
    "Read the sentence around the blank first: its grammar and topic narrow the word a lot. "
    "Guess common letters only until the word is clear, then guess the whole word.",
    "Use the blank's length and the revealed letters together with the meaning of the "
    "sentence; a whole-word guess ends the game sooner than more letters.",
    "Start with frequent vowels, then think about which word fits both the pattern and the "
    "context, and guess it as a whole word.",
)
