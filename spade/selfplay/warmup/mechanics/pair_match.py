"""Memory game: face-down cards hold document terms in pairs; flip two at a time.

Code fragments are raw strings holding the generated code verbatim, with `$slots`.
"""

from __future__ import annotations

import random

from spade.selfplay.warmup.content import Content

from ._parts import Target, class_name, docstring, fill, literal, read_slots, say

_SOURCE = r"""$doc$imports

TERMS = $terms


class $cls:
    metadata = $metadata
    max_turns = $turns

    def reset(self, seed=None):
        rng = random.Random(seed)
$deal
        self.found, self.turns = [], 0
        return $intro, {}

    def step(self, action):
        self.turns += 1
$read
$flip
        if len(self.found) == $cards:
            return $win, 1.0, True, False, {}
        return note, $score, self.turns >= self.max_turns, False, {}

    def solution(self):
$solve

    def close(self):
        pass
"""

_DEALS = (
    r"""        self.cards = rng.sample(TERMS, $pairs) * 2
        rng.shuffle(self.cards)""",
    r"""        chosen = rng.sample(TERMS, $pairs)
        self.cards = rng.sample(chosen + chosen, $cards)""",
)
_SOLVES = (
    r"""        moves = []
        for term in dict.fromkeys(self.cards):
            i = self.cards.index(term)
            moves.append(f"\\boxed{{{i} {self.cards.index(term, i + 1)}}}")
        return moves""",
    r"""        where = {}
        for i, term in enumerate(self.cards):
            where.setdefault(term, []).append(i)
        return ["\\boxed{%d %d}" % tuple(pair) for pair in where.values()]""",
)
_FLIPS = (
    r'''        picks = [int(p) for p in text.split() if p.isdigit() and int(p) < $cards]
        if len(picks) != 2 or picks[0] == picks[1]:
            note = $invalid
        else:
            a, b = (self.cards[p] for p in picks)
            if a == b and picks[0] not in self.found:
                self.found += picks
            note = f"{a} / {b}"''',
    r'''        parts = text.replace(",", " ").split()
        if len(parts) != 2 or not all(p.isdigit() and int(p) < $cards for p in parts):
            note = $invalid
        else:
            i, j = int(parts[0]), int(parts[1])
            same = i != j and self.cards[i] == self.cards[j]
            if same and i not in self.found:
                self.found += [i, j]
            note = f"{i}: {self.cards[i]}, {j}: {self.cards[j]}"''',
)
_INTROS = (
    r'"Cards 0-$last hide $pairs pairs. Flip two: \\boxed{i j}."',
    r'"Find the $pairs pairs among cards 0..$last with \\boxed{i j}."',
)


_KIT_SOURCE = r"""$doc
TERMS = $terms


class $cls(TextScaffold):
    metadata = $metadata
    max_turns = $turns

    def setup(self, rng):
$deal
        self.found = []
        return $intro

    def act(self, command):
$flip
        if len(self.found) == $cards:
            return $win, 1.0
        return note, $score

    def solution(self):
$solve
"""

_KIT_FLIPS = (
    r'''        picks = [int(p) for p in command.split() if p.isdigit() and int(p) < $cards]
        if len(picks) != 2 or picks[0] == picks[1]:
            return $invalid, None
        a, b = (self.cards[p] for p in picks)
        if a == b and picks[0] not in self.found:
            self.found += picks
        note = f"{a} / {b}"''',
    r'''        parts = command.replace(",", " ").split()
        if len(parts) != 2 or not all(p.isdigit() and int(p) < $cards for p in parts):
            return $invalid, None
        i, j = int(parts[0]), int(parts[1])
        if i != j and self.cards[i] == self.cards[j] and i not in self.found:
            self.found += [i, j]
        note = f"{i}: {self.cards[i]}, {j}: {self.cards[j]}"''',
    r'''        i, j = map(int, command.replace(",", " ").split())
        if i == j or min(i, j) < 0:
            return $invalid, None
        a, b = self.cards[i], self.cards[j]
        if a == b and i not in self.found:
            self.found += [i, j]
        note = f"{i} is {a}, {j} is {b}."''',
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    return fill(_SOURCE, **_slots(rng, content, target, kit=False))


def build_kit(rng: random.Random, content: Content, target: Target) -> str:
    """The same env as `build` on the text-env scaffold: the design only."""
    return fill(_KIT_SOURCE, **_slots(rng, content, target, kit=True))


def _slots(rng: random.Random, content: Content, target: Target, *, kit: bool) -> dict[str, object]:
    """The slots of `_SOURCE` (with a reader) or, with `kit`, of `_KIT_SOURCE`. The draws
    from `rng` keep their order, so a seed still gives the same env."""
    pairs = int(target.pick(3, 4, 5))
    terms = list(content.items(pairs + 2))
    slots = {} if kit else read_slots(rng)
    return slots | dict(
        doc=docstring(rng, "Find matching pairs of cards.", "A memory game."),
        terms=literal(terms),
        cls=class_name(content, rng.choice(["Pairs", "Memory", "Match", "Cards"])),
        metadata=target.metadata(),
        turns=2 * pairs + int(target.pick(4, 3, 2)),
        pairs=pairs,
        cards=2 * pairs,
        last=2 * pairs - 1,
        intro=rng.choice(_INTROS),
        flip=rng.choice(_KIT_FLIPS if kit else _FLIPS),
        deal=rng.choice(_DEALS),
        solve=rng.choice(_SOLVES),
        invalid=say(rng, r'"Send \\boxed{i j}."', '"Invalid flip."'),
        win=say(rng, '"All pairs found!"', '"Board cleared!"', '"You matched them all."'),
        score=say(
            rng,
            f"len(self.found) / {2 * pairs}",
            f"{rng.choice([0.9, 0.8])} * len(self.found) / {2 * pairs}",
        ),
    )


HINTS = (
    "Remember every card you have seen. Flip unknown cards until one matches a card you "
    "remember, then flip that known pair together.",
    "Never flip two cards you have already seen unless they match; spend each turn either "
    "claiming a known pair or revealing new cards.",
    "Keep a mental map of positions and their words; a match is claimed by flipping both of "
    "its positions in one turn.",
)
