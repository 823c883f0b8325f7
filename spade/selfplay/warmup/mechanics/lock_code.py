"""Mastermind over document words: find the hidden order from exact/misplaced counts.

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
        self.code = $draw
        self.turns = self.best = 0
        return $intro, {}

    def step(self, action):
        self.turns += 1
$read
        guess = text.lower().split()
        done = self.turns >= self.max_turns
        if guess == self.code:
            return $win, 1.0, True, False, {}
        if len(guess) != $size:
            return $invalid, self.best, done, False, {}
$feedback
        return note, self.best, done, False, {}

    def solution(self):
        return ["\\boxed{%s}" % " ".join(self.code)]

    def close(self):
        pass
"""

_FEEDBACK = (
    r'''        exact = sum(a == b for a, b in zip(guess, self.code))
        near = sum(min(guess.count(w), self.code.count(w)) for w in WORDS) - exact
        self.best = max(self.best, $cap * exact / $size)
        note = f"{exact} in place, {near} elsewhere."''',
    r'''        marks = ["+" if a == b else "?" if a in self.code else "-"
                 for a, b in zip(guess, self.code)]
        self.best = max(self.best, $cap * marks.count("+") / $size)
        note = " ".join(marks) + "  (+ right, ? misplaced, - absent)"''',
    r'''        hits = [i + 1 for i in range($size) if guess[i] == self.code[i]]
        self.best = max(self.best, $cap * len(hits) / $size)
        note = f"Right slots: {hits or 'none'}."''',
)
_INTROS = (
    r'"Find the hidden sequence of $size words from: " + ", ".join(WORDS) + $how',
    r'f"A lock opens with $size words in order, taken from {WORDS}." + $how',
)
_HOWS = (
    r'". Send \\boxed{$slots}."',
    r'". Reply \\boxed{...} with the words separated by spaces."',
)


_KIT_SOURCE = r"""$doc
WORDS = $words


class $cls(TextScaffold):
    metadata = $metadata
    max_turns = $turns

    def setup(self, rng):
        self.code = $draw
        return $intro

    def act(self, command):
        guess = command.lower().split()
        if guess == self.code:
            return $win, 1.0
        if len(guess) != $size:
            return $invalid, None
$feedback
        return note, progress

    def solution(self):
        return ["\\boxed{%s}" % " ".join(self.code)]
"""

_KIT_FEEDBACK = (
    r'''        exact = sum(a == b for a, b in zip(guess, self.code))
        near = sum(min(guess.count(w), self.code.count(w)) for w in WORDS) - exact
        progress = $cap * exact / $size
        note = f"{exact} in place, {near} elsewhere."''',
    r'''        marks = ["+" if a == b else "?" if a in self.code else "-"
                 for a, b in zip(guess, self.code)]
        progress = $cap * marks.count("+") / $size
        note = " ".join(marks) + "  (+ right, ? misplaced, - absent)"''',
    r'''        hits = [i + 1 for i in range($size) if guess[i] == self.code[i]]
        progress = $cap * len(hits) / $size
        note = f"Right slots: {hits or 'none'}."''',
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    return fill(_SOURCE, **_slots(rng, content, target, kit=False))


def build_kit(rng: random.Random, content: Content, target: Target) -> str:
    """The same env as `build` on the text-env scaffold: the design only."""
    return fill(_KIT_SOURCE, **_slots(rng, content, target, kit=True))


def _slots(rng: random.Random, content: Content, target: Target, *, kit: bool) -> dict[str, object]:
    """The slots of `_SOURCE` (with a reader) or, with `kit`, of `_KIT_SOURCE`. The draws
    from `rng` keep their order, so a seed still gives the same env."""
    words = list(content.items(int(target.pick(4, 5, 6))))
    size = int(target.pick(3, 3, 4))
    repeats = rng.random() < 0.4
    draw = (
        f"[rng.choice(WORDS) for _ in range({size})]" if repeats else f"rng.sample(WORDS, {size})"
    )
    slots = {} if kit else read_slots(rng)
    how = rng.choice(_HOWS).replace("$slots", " ".join(["word"] * size))
    return slots | dict(
        doc=docstring(rng, "Deduce a hidden word sequence.", "Mastermind with words."),
        words=literal(words),
        cls=class_name(content, rng.choice(["Lock", "Code", "Combo", "Sequence"])),
        metadata=target.metadata(),
        turns=int(target.pick(10, 9, 10)),
        draw=draw,
        intro=rng.choice(_INTROS).replace("$how", how),
        size=size,
        win=say(rng, '"Unlocked!"', '"Solved!"', '"That is the code."'),
        invalid=say(rng, f'"Send exactly {size} words."', '"Wrong number of words."'),
        feedback=rng.choice(_KIT_FEEDBACK if kit else _FEEDBACK),
        cap=rng.choice([0.9, 0.8, 0.75]),
    )


HINTS = (
    "Change one slot at a time and compare the feedback with the previous guess: a rise or "
    "drop in the right-place count tells you what that slot holds.",
    "Start with guesses that test several candidates at once, then keep every word reported "
    "in place fixed while you try the rest in the open slots.",
    "Track, for every slot, which candidates the feedback has ruled out; never repeat a guess "
    "that contradicts an earlier reply.",
)
