"""Walk a grid to a hidden cell; each move reports the distance (or warmer/colder).

Code fragments are raw strings holding the generated code verbatim, with `$slots`.
"""

from __future__ import annotations

import random

from spade.selfplay.warmup.content import Content

from ._parts import Target, class_name, docstring, fill, read_slots, say

_SOURCE = r"""$doc$imports

class $cls:
    metadata = $metadata
    max_turns = $turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        $goal = rng.randrange($size), rng.randrange(1, $size)
$state
        return $intro, {}

    def step(self, action):
        self.turns += 1
$read
$move
        dist = $dist
        if dist == 0:
            return $win, 1.0, True, False, {}
$feedback
        return note, $score, self.turns >= self.max_turns, False, {}

    def solution(self):
        return [$down] * $g0 + [$right] * $g1

    def close(self):
        pass
"""

_MOVE_SETS = (
    ("up", "down", "left", "right"),
    ("north", "south", "west", "east"),
    ("n", "s", "w", "e"),
)
# Distance feedback with the best closeness as reward, or warmer/colder with the current one.
_FEEDBACKS = (
    (
        "        self.r = self.c = self.turns = self.best = 0",
        r"""        self.best = max(self.best, round($cap - $cap * dist / $span, 3))
        note = $distance_note""",
        "self.best",
    ),
    (
        "        self.r = self.c = self.turns = 0\n        self.dist = $span",
        '        note = "Warmer." if dist < self.dist else '
        '"Colder." if dist > self.dist else "Same."\n'
        "        self.dist = dist",
        "round($cap - $cap * dist / $span, 3)",
    ),
)
# Moves as arithmetic on comparisons, or spelled out.
_MOVES = (
    r"""        self.r = min($last, max(0, self.r + (text == $d_word) - (text == $u_word)))
        self.c = min($last, max(0, self.c + (text == $r_word) - (text == $l_word)))""",
    r"""        if text == $u_word:
            self.r = max(0, self.r - 1)
        elif text == $d_word:
            self.r = min($last, self.r + 1)
        elif text == $l_word:
            self.c = max(0, self.c - 1)
        elif text == $r_word:
            self.c = min($last, self.c + 1)""",
)
_INTROS = (
    r'"The $thing hides on a $size x $size grid; you start at (0, 0). Send \\boxed{$u} etc."',
    r'"Find the $thing: rows/cols 0-$last, start (0, 0). Moves: \\boxed{$moves_list}."',
)


_KIT_SOURCE = r"""$doc
class $cls(TextScaffold):
    metadata = $metadata
    max_turns = $turns

    def setup(self, rng):
        $goal = rng.randrange($size), rng.randrange(1, $size)
$state
        return $intro

    def act(self, command):
$move
        dist = $dist
        if dist == 0:
            return $win, 1.0
$feedback
        return note, $progress

    def solution(self):
        return [$down] * $g0 + [$right] * $g1
"""

# The scaffold keeps the best closeness as the reward; the feedback is the distance or
# warmer/colder.
_KIT_FEEDBACKS = (
    ("        self.r = self.c = 0", "        note = $distance_note"),
    (
        "        self.r = self.c = 0\n        self.dist = $span",
        '        note = "Warmer." if dist < self.dist else '
        '"Colder." if dist > self.dist else "Same."\n'
        "        self.dist = dist",
    ),
)
_KIT_MOVES = (
    r"""        self.r = min($last, max(0, self.r + (command == $d_word) - (command == $u_word)))
        self.c = min($last, max(0, self.c + (command == $r_word) - (command == $l_word)))""",
    r"""        if command == $u_word:
            self.r = max(0, self.r - 1)
        elif command == $d_word:
            self.r = min($last, self.r + 1)
        elif command == $l_word:
            self.c = max(0, self.c - 1)
        elif command == $r_word:
            self.c = min($last, self.c + 1)""",
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    return fill(_SOURCE, **_slots(rng, content, target, kit=False))


def build_kit(rng: random.Random, content: Content, target: Target) -> str:
    """The same env as `build` on the text-env scaffold: the design only."""
    return fill(_KIT_SOURCE, **_slots(rng, content, target, kit=True))


def _slots(rng: random.Random, content: Content, target: Target, *, kit: bool) -> dict[str, object]:
    """The slots of `_SOURCE` (with a reader) or, with `kit`, of `_KIT_SOURCE`. The draws
    from `rng` keep their order, so a seed still gives the same env."""
    size = int(target.pick(4, 5, 6))
    up, down, left, right = rng.choice(_MOVE_SETS)
    thing = (content.items(1) or ("treasure",))[0]
    slots = {} if kit else read_slots(rng)
    # A plain feedback comes with its reward (`score`); the kit's reward is drawn below.
    state, feedback, *score = rng.choice(_KIT_FEEDBACKS if kit else _FEEDBACKS)
    manhattan = rng.random() < 0.6  # else the king-move distance: max of the two offsets
    goal, g0, g1 = rng.choice(
        [("self.goal", "self.goal[0]", "self.goal[1]"), ("self.gr, self.gc", "self.gr", "self.gc")]
    )
    slots |= dict(
        doc=docstring(
            rng, "Find a hidden cell from distance feedback.", f"Search for the {thing}."
        ),
        cls=class_name(content, rng.choice(["Grid", "Walk", "Map", "Trail"])),
        metadata=target.metadata(),
        turns=2 * size + int(target.pick(4, 2, 0)),
        size=size,
        last=size - 1,
        span=2 * size - 2 if manhattan else size - 1,
        dist=(
            f"abs(self.r - {g0}) + abs(self.c - {g1})"
            if manhattan
            else f"max(abs(self.r - {g0}), abs(self.c - {g1}))"
        ),
        goal=goal,
        g0=g0,
        g1=g1,
        move=rng.choice(_KIT_MOVES if kit else _MOVES),
        state=state,
        intro=rng.choice(_INTROS),
        thing=thing,
        u=up,
        moves_list="|".join([up, down, left, right]),
        win=say(rng, '"Found it!"', f'"You reached the {thing}!"'),
        feedback=feedback,
        distance_note=say(
            rng, 'f"At ({self.r}, {self.c}), distance {dist}."', 'f"{dist} steps away."'
        ),
    )
    if kit:
        slots["progress"] = say(
            rng, "round($cap - $cap * dist / $span, 3)", "$cap * (1 - dist / $span)"
        )
    else:
        slots["score"] = score[0]
    return slots | dict(
        cap=rng.choice([0.9, 0.8]),
        u_word=f'"{up}"',
        d_word=f'"{down}"',
        l_word=f'"{left}"',
        r_word=f'"{right}"',
        down=rf'"\\boxed{{{down}}}"',
        right=rf'"\\boxed{{{right}}}"',
    )


HINTS = (
    "Move along one axis until the distance stops shrinking, then switch to the other axis; "
    "a move that increases the distance points the wrong way.",
    "Compare the feedback before and after every move: getting closer means keep going, "
    "getting farther means turn back and try another direction.",
    "Do not wander: probe one direction, read how the feedback changes, and keep walking the "
    "way that brings you nearer until you stand on the hidden cell.",
)
