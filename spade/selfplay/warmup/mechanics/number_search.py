"""Find a hidden number from higher/lower feedback; the range starts at a document number.

Code fragments are raw strings holding the generated code verbatim, with `$slots`.
"""

from __future__ import annotations

import random

from spade.selfplay.warmup.content import Content

from ._parts import Target, class_name, docstring, fill, literal, read_slots, say

_SOURCE = r"""$doc$imports
$consts

class $cls:
    metadata = $metadata
    max_turns = $turns

    def reset(self, seed=None):
        rng = random.Random(seed)
$setup
        return $intro, {}

    def step(self, action):
        self.turns += 1
$read
        guess = int(text) if text.isdigit() else None
        if guess == self.secret:
            return $win, 1.0, True, False, {}
$compare
        return note, $score, self.turns >= self.max_turns, False, {}

    def solution(self):
$solve

    def close(self):
        pass
"""

# Interval state: the reward is the share of the range the guesses have ruled out.
_BOUNDS = (
    r"""        self.lo = $low
        self.hi = self.lo + $span
        self.secret = rng.randint(self.lo, self.hi)
        self.turns = 0""",
    r"""        if guess is None:
            note = $invalid
        elif guess < self.secret:
            self.lo, note = max(self.lo, guess + 1), $low_note
        else:
            self.hi, note = min(self.hi, guess - 1), $high_note""",
    "$cap * (1 - (self.hi - self.lo) / $span)",
    ("{self.lo}", "{self.hi}"),
)

# Closeness state: the reward is how near the best guess came.
_CLOSE = (
    r"""        low = $low
        self.range = (low, low + $span)
        self.secret = rng.randint(low, low + $span)
        self.best = self.turns = 0""",
    r"""        if guess is None:
            note = $invalid
        else:
            self.best = max(self.best, $cap - $cap * abs(guess - self.secret) / $span)
            note = $low_note if guess < self.secret else $high_note""",
    "self.best",
    ("{low}", "{low + $span}"),
)

_SOLVES = (
    r"""        lo, hi, moves = $first, $last, []
        while True:
            mid = (lo + hi) // 2
            moves.append(f"\\boxed{{{mid}}}")
            if mid == self.secret:
                return moves
            lo, hi = (mid + 1, hi) if mid < self.secret else (lo, mid - 1)""",
    r"""        low, high = $first, $last
        moves = []
        while low <= high:
            mid = (low + high) // 2
            moves.append("\\boxed{%d}" % mid)
            if mid == self.secret:
                break
            if mid < self.secret:
                low = mid + 1
            else:
                high = mid - 1
        return moves""",
)

_INTROS = (
    r'f"Guess the $what in [$lo, $hi]: reply \\boxed{{N}}."',
    r'f"Find the secret $theme $what ($lo-$hi) with \\boxed{{N}}."',
    r'f"A $what from $lo to $hi is hidden. Send \\boxed{{N}}."',
)
_NOTES = (
    (r'f"{guess} is too low."', r'f"{guess} is too high."'),
    (r'f"Higher than {guess}."', r'f"Lower than {guess}."'),
    (r'"Go up."', r'"Go down."'),
    (r'"Higher."', r'"Lower."'),
)


_KIT_SOURCE = r"""$doc$consts
class $cls(TextScaffold):
    metadata = $metadata
    max_turns = $turns

    def setup(self, rng):
$setup
        return $intro

    def act(self, command):
        if not command.isdigit():
            return $invalid, None
        guess = int(command)
        if guess == self.secret:
            return $win, 1.0
$compare
        return note, $score

    def solution(self):
$solve
"""

# Interval state: progress is the share of the range the guesses have ruled out.
_KIT_BOUNDS = (
    r"""        self.lo = $low
        self.hi = self.lo + $span
        self.secret = rng.randint(self.lo, self.hi)""",
    r"""        if guess < self.secret:
            self.lo, note = max(self.lo, guess + 1), $low_note
        else:
            self.hi, note = min(self.hi, guess - 1), $high_note""",
    "$cap * (1 - (self.hi - self.lo) / $span)",
    ("{self.lo}", "{self.hi}"),
)

# Closeness: progress is how near this guess came (the scaffold keeps the best).
_KIT_CLOSE = (
    r"""        low = $low
        self.range = (low, low + $span)
        self.secret = rng.randint(low, low + $span)""",
    r"""        note = $low_note if guess < self.secret else $high_note""",
    "$cap - $cap * abs(guess - self.secret) / $span",
    ("{low}", "{low + $span}"),
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    return fill(_SOURCE, **_slots(rng, content, target, kit=False))


def build_kit(rng: random.Random, content: Content, target: Target) -> str:
    """The same env as `build` on the text-env scaffold: the design only."""
    return fill(_KIT_SOURCE, **_slots(rng, content, target, kit=True))


def _slots(rng: random.Random, content: Content, target: Target, *, kit: bool) -> dict[str, object]:
    """The slots of `_SOURCE` (with a reader) or, with `kit`, of `_KIT_SOURCE`. The draws
    from `rng` keep their order, so a seed still gives the same env."""
    spans = rng.choice([31, 50, 63]), rng.choice([127, 200, 255]), rng.choice([500, 1000, 1023])
    span = int(target.pick(*spans))
    turns = span.bit_length() + int(target.pick(4, 2, 1))
    anchors = list(content.numbers[:3])
    inline = rng.random() < 0.6  # the numbers in reset()/setup() or as a module constant
    if anchors:
        low = f"rng.choice({literal(anchors)})" if inline else "rng.choice(ANCHORS)"
    else:
        low = f"rng.randint(1, {span * 4})"
    bounds = rng.random() < 0.5
    interval, close = (_KIT_BOUNDS, _KIT_CLOSE) if kit else (_BOUNDS, _CLOSE)
    setup, compare, score, (lo, hi) = interval if bounds else close
    first, last = ("self.lo", "self.hi") if bounds else ("*self.range", "")
    slots = {} if kit else read_slots(rng)
    what = say(rng, "number", "value", "year", "count")
    low_note, high_note = rng.choice(_NOTES)
    slots |= {
        "theme": content.label(),
        "what": what,
        "span": span,
        "turns": turns,
        "low": low,
        "cap": rng.choice([0.9, 0.8, 0.95]),
        "low_note": low_note,
        "high_note": high_note,
        "win": say(rng, '"Correct!"', '"You found it!"', '"Exactly right."'),
        "invalid": say(
            rng, r'"Send one integer as \\boxed{N}."', r'"Use \\boxed{N}."', '"Invalid guess."'
        ),
    }
    solve = rng.choice(_SOLVES)
    if not bounds:  # the range tuple unpacks into both names
        solve = solve.replace(
            "lo, hi, moves = $first, $last, []", "(lo, hi), moves = self.range, []"
        )
        solve = solve.replace("$first, $last", "self.range")
    consts = f"ANCHORS = {literal(anchors)}" if anchors and not inline else ""
    return slots | dict(
        doc=docstring(rng, "Higher/lower search.", f"Guess a hidden {what}."),
        # The plain template puts the constant below its imports, the kit's above its class.
        consts=consts and (f"{consts}\n\n" if kit else f"\n{consts}\n"),
        cls=class_name(content, rng.choice(["Guess", "Search", "Number", "Hunt"])),
        metadata=target.metadata(),
        setup=setup,
        intro=rng.choice(_INTROS).replace("$lo", lo).replace("$hi", hi),
        compare=compare,
        score=score,
        solve=solve,
        first=first,
        last=last,
    )


HINTS = (
    "Keep the lowest and highest values that are still possible and always guess the middle "
    "of that interval; every reply halves what is left.",
    "Treat it as binary search: after each higher/lower reply, narrow the interval and pick "
    "its midpoint, so the turn budget is never wasted.",
    "Never guess outside the interval the replies still allow; the middle of the remaining "
    "interval is the guess that rules out the most.",
)
