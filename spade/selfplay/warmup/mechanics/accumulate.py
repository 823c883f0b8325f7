"""Reach an exact total by adding and dropping document items with (sometimes hidden) values.

Code fragments are raw strings holding the generated code verbatim, with `$slots`.
"""

from __future__ import annotations

import random

from spade.selfplay.warmup.content import Content

from ._parts import Target, class_name, docstring, fill, literal, read_slots, say

_SOURCE = r"""$doc$imports

ITEMS = $items


class $cls:
    metadata = $metadata
    max_turns = $turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.values = {name: rng.randint($low, $high) for name in ITEMS}
        self.pick = rng.sample(ITEMS, $size)
        self.target = sum(self.values[name] for name in self.pick)
        self.bag, self.turns = [], 0
        return $intro, {}

    def step(self, action):
        self.turns += 1
$read
        verb, _, name = text.partition(" ")
$apply
        total = sum(self.values[n] for n in self.bag)
        if total == self.target:
            return $win, 1.0, True, False, {}
        score = $cap * max(0, 1 - abs(self.target - total) / self.target)
        return $note, score, self.turns >= self.max_turns, False, {}

    def solution(self):
        return [f"\\boxed{{add {name}}}" for name in self.pick]

    def close(self):
        pass
"""

_APPLIES = (
    r"""        if verb == "add" and name in self.values and name not in self.bag:
            self.bag.append(name)
        elif verb == "drop" and name in self.bag:
            self.bag.remove(name)""",
    r"""        if name not in self.values:
            return $invalid, 0.0, self.turns >= self.max_turns, False, {}
        if verb == "add" and name not in self.bag:
            self.bag.append(name)
        if verb == "drop" and name in self.bag:
            self.bag.remove(name)""",
)

_KIT_SOURCE = r"""$doc
ITEMS = $items


class $cls(TextScaffold):
    metadata = $metadata
    max_turns = $turns

    def setup(self, rng):
$values
        self.pick = rng.sample(ITEMS, $size)
        self.target = sum(self.values[n] for n in self.pick)
        self.bag = []
        return $intro

    def act(self, command):
$apply
        total = sum(self.values[n] for n in self.bag)
        if total == self.target:
            return $win, 1.0
        return $note, $cap * (1 - abs(self.target - total) / self.target)

    def solution(self):
        return [f"\\boxed{{add {name}}}" for name in self.pick]
"""

_KIT_VALUES = (
    "        self.values = {name: rng.randint($low, $high) for name in ITEMS}",
    "        self.values = dict(zip(ITEMS, rng.sample(range($low, $high + 1), len(ITEMS))))",
)
_KIT_APPLIES = (
    r"""        verb, _, name = command.partition(" ")
        if verb == "add" and name in self.values and name not in self.bag:
            self.bag.append(name)
        elif verb == "drop" and name in self.bag:
            self.bag.remove(name)""",
    r"""        verb, _, name = command.partition(" ")
        if name not in self.values:
            return $invalid, None
        if verb == "add" and name not in self.bag:
            self.bag.append(name)
        if verb == "drop" and name in self.bag:
            self.bag.remove(name)""",
    r"""        verb, name = command.split(None, 1)
        if name not in self.values:
            return $invalid, None
        if verb == "drop":
            self.bag = [n for n in self.bag if n != name]
        elif verb == "add" and name not in self.bag:
            self.bag.append(name)""",
)

# Values shown up front (planning a subset sum) or revealed only by adding (exploration).
_INTROS = {
    "shown": r'f"Reach {self.target} exactly. Values: {self.values}. '
    r'\\boxed{{add X}} or \\boxed{{drop X}}."',
    "hidden": r'f"Reach {self.target} with {ITEMS}; values show once added. '
    r'\\boxed{{add X}}/\\boxed{{drop X}}."',
}
_NOTES = {
    "shown": (r'f"Total {total}."', r'f"{self.bag} = {total}"'),
    "hidden": (
        r'f"Total {total}: " + str({n: self.values[n] for n in self.bag})',
        r'f"Sum {total}, known {[self.values[n] for n in self.bag]}"',
    ),
}


def build(rng: random.Random, content: Content, target: Target) -> str:
    return fill(_SOURCE, **_slots(rng, content, target, kit=False))


def build_kit(rng: random.Random, content: Content, target: Target) -> str:
    """The same env as `build` on the text-env scaffold: the design only."""
    return fill(_KIT_SOURCE, **_slots(rng, content, target, kit=True))


def _slots(rng: random.Random, content: Content, target: Target, *, kit: bool) -> dict[str, object]:
    """The slots of `_SOURCE` (with a reader) or, with `kit`, of `_KIT_SOURCE`. The draws
    from `rng` keep their order, so a seed still gives the same env."""
    count = int(target.pick(4, 5, 6))
    items = list(content.items(count))
    shown = "shown" if rng.random() < 0.5 else "hidden"
    slots = {} if kit else read_slots(rng)
    low, high = rng.choice([(2, 20), (5, 40), (10, 90)])
    slots |= dict(
        doc=docstring(rng, "Hit an exact total with a subset of items.", "A subset-sum game."),
        items=literal(items),
        cls=class_name(content, rng.choice(["Total", "Budget", "Sum", "Tally"])),
        metadata=target.metadata(),
        turns=int(target.pick(8, 8, 7)) + (2 if shown == "hidden" else 0),
        low=low,
        high=high,
        size=int(target.pick(2, 3, 3)),
        intro=_INTROS[shown],
    )
    if kit:
        slots["values"] = rng.choice(_KIT_VALUES)
    return slots | dict(
        apply=rng.choice(_KIT_APPLIES if kit else _APPLIES),
        invalid=say(rng, '"Unknown item."', r'"Use \\boxed{add X}."'),
        win=say(rng, '"Exact total reached!"', '"Target hit."', '"Done."'),
        cap=rng.choice([0.9, 0.8, 0.7]),
        note=rng.choice(_NOTES[shown]),
    )


def fits(content: Content) -> bool:
    return len(content.items(6)) >= 6


HINTS = (
    "Work out which combination of values adds up to the target before acting, and add only "
    "those items; drop an item as soon as the total overshoots.",
    "Keep a running total and the gap to the target after every move; choose the item whose "
    "value closes the gap without going over.",
    "If values are hidden, add items one at a time to learn them, drop the ones that do not "
    "fit, and finish with the combination that matches exactly.",
)
