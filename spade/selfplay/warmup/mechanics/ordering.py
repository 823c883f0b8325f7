"""Put document items in order with swap commands; feedback says which positions are right.

The order is visible (alphabetical, or numeric for the document's numbers) or hidden (only
the positional feedback reveals it). Code fragments are raw strings holding the generated
code verbatim, with `$slots`.
"""

from __future__ import annotations

import random

from spade.selfplay.warmup.content import Content

from ._parts import Target, class_name, docstring, fill, literal, read_slots, say

_SOURCE = r"""$doc$imports

class $cls:
    metadata = $metadata
    max_turns = $turns

    def reset(self, seed=None):
        rng = random.Random(seed)
$goal
        self.row = rng.sample(self.goal, $count)
        if self.row == self.goal:
            self.row.reverse()
        self.turns = 0
        return $intro, {}

    def step(self, action):
        self.turns += 1
$read
$swap
        if self.row == self.goal:
            return $win, 1.0, True, False, {}
        right = sum(a == b for a, b in zip(self.row, self.goal))
        return $feedback, $score, self.turns >= self.max_turns, False, {}

    def solution(self):
$solve

    def close(self):
        pass
"""

# Selection sort towards the goal, written two ways.
_SOLVES = (
    r"""        row, moves = list(self.row), []
        for i, item in enumerate(self.goal):
            j = row.index(item)
            if j != i:
                row[i], row[j] = row[j], row[i]
                moves.append(f"\\boxed{{swap {i} {j}}}")
        return moves""",
    r"""        row, moves = list(self.row), []
        for i in range($count):
            j = row.index(self.goal[i], i)
            if j > i:
                row[i], row[j] = row[j], row[i]
                moves.append("\\boxed{swap %d %d}" % (i, j))
        return moves""",
)
_GOALS = {
    "alphabetical": "        self.goal = sorted(rng.sample($items, $count))",
    "numeric": "        self.goal = sorted(rng.sample($items, $count))",
    "hidden": "        self.goal = rng.sample($items, $count)",
}
_RULES = {
    "alphabetical": "alphabetical order",
    "numeric": "increasing order",
    "hidden": "a hidden order",
}
_SWAPS = (
    r"""        parts = text.replace("swap", "").split()
        if len(parts) == 2 and all(p.isdigit() and int(p) < $count for p in parts):
            i, j = int(parts[0]), int(parts[1])
            self.row[i], self.row[j] = self.row[j], self.row[i]""",
    r"""        nums = [int(n) for n in text.split()[1:] if n.isdigit()]
        if len(nums) == 2 and max(nums) < $count:
            a, b = nums
            self.row[a], self.row[b] = self.row[b], self.row[a]""",
)
_FEEDBACKS = {
    "visible": (r'f"{self.row}: {right} in place."', r'f"Now {self.row}"'),
    "hidden": (r'f"{self.row}: {right} in place."', r'f"{right} right: {self.row}"'),
}
_INTROS = (
    r'f"Sort {self.row} ($rule): \\boxed{{swap i j}}, 0-based."',
    r'f"Put {self.row} in $rule. Send \\boxed{{swap i j}}."',
)


_KIT_SOURCE = r"""$doc
class $cls(TextScaffold):
    metadata = $metadata
    max_turns = $turns

    def setup(self, rng):
$goal
        self.row = rng.sample(self.goal, $count)
        if self.row == self.goal:
            self.row.reverse()
        return $intro

    def act(self, command):
$swap
        if self.row == self.goal:
            return $win, 1.0
        right = sum(a == b for a, b in zip(self.row, self.goal))
        return $feedback, $score

    def solution(self):
$solve
"""

_KIT_SWAPS = (
    r"""        parts = command.replace("swap", "").split()
        if len(parts) != 2 or not all(p.isdigit() and int(p) < $count for p in parts):
            return $invalid, None
        i, j = int(parts[0]), int(parts[1])
        self.row[i], self.row[j] = self.row[j], self.row[i]""",
    r"""        verb, a, b = command.split()
        a, b = int(a), int(b)
        self.row[a], self.row[b] = self.row[b], self.row[a]""",
    r"""        i, j = map(int, re.findall(r"\d+", command))
        self.row[i], self.row[j] = self.row[j], self.row[i]""",
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    return fill(_SOURCE, **_slots(rng, content, target, kit=False))


def build_kit(rng: random.Random, content: Content, target: Target) -> str:
    """The same env as `build` on the text-env scaffold: the design only."""
    return fill(_KIT_SOURCE, **_slots(rng, content, target, kit=True))


def _slots(rng: random.Random, content: Content, target: Target, *, kit: bool) -> dict[str, object]:
    """The slots of `_SOURCE` (with a reader) or, with `kit`, of `_KIT_SOURCE`. The draws
    from `rng` keep their order, so a seed still gives the same env."""
    count = int(target.pick(4, 5, 5))
    numbers = [n for n in content.numbers if n < 100_000]
    orders = ["alphabetical", "hidden"] + (["numeric"] if len(numbers) >= count else [])
    order = rng.choice(orders)
    items = numbers[: count + 1] if order == "numeric" else list(content.items(count + 1, 7))
    slots = {} if kit else read_slots(rng)
    feedback = rng.choice(_FEEDBACKS["hidden" if order == "hidden" else "visible"])
    swaps = count - 1 if order == "hidden" else 0  # a hidden order costs turns to discover
    slots |= dict(
        doc=docstring(rng, f"Order items into {_RULES[order]} by swaps.", "A sorting puzzle."),
        items=literal(items),
        cls=class_name(content, rng.choice(["Order", "Sort", "Arrange", "Swap"])),
        metadata=target.metadata(),
        turns=count - 1 + swaps + int(target.pick(4, 3, 2)),
        goal=_GOALS[order],
        count=count,
        intro=rng.choice(_INTROS),
        rule=_RULES[order],
        swap=rng.choice(_KIT_SWAPS if kit else _SWAPS),
        solve=rng.choice(_SOLVES),
    )
    if kit:
        slots["invalid"] = say(rng, r'"Send \\boxed{swap i j}."', '"Invalid swap."')
    return slots | dict(
        win=say(rng, '"Sorted!"', '"All in order."', '"Done: correct order."'),
        feedback=feedback,
        score=say(rng, f"{rng.choice([0.9, 0.8])} * right / {count}", f"right / {count + 1}"),
    )


def fits(content: Content) -> bool:
    # `build` draws items of at most 7 letters: count those.
    return len(content.items(7, 7)) >= 7


HINTS = (
    "Fix the positions from left to right: find the item that belongs first, swap it into "
    "place, and never move an item that is already correct.",
    "Each swap can put at least one item into its final place; use the feedback after every "
    "swap to see which positions are settled.",
    "When the order is not known, test a swap and watch whether the count of correct "
    "positions rises or falls, then keep or undo it.",
)
