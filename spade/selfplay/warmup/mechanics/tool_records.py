"""Tool use: read hidden values of document items through a tool, then name the extreme one.

Code fragments are raw strings holding the generated code verbatim, with `$slots`.
"""

from __future__ import annotations

import random

from spade.selfplay.warmup.content import Content

from ._parts import Target, class_name, docstring, fill, literal, say
from ._tools import Tool, call, call_parse, schemas

_SOURCE = r"""${doc}import json
import random

$items$module

class $cls:
    metadata = $metadata
    max_turns = $turns
$tools

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.values = {k: rng.randint($low, $high) for k in $names}
        self.best = $pick(self.values, key=self.values.get)
        self.seen, self.turns = set(), 0
        return $intro, {}

    def step(self, action):
        self.turns += 1
$parse
        if name == "$answer" and item == self.best:
            return $win, 1.0, True, False, {}
        note = $miss
        if name == "$read" and item in self.values:
            self.seen.add(item)
            note = $value_note
        return note, $score, self.turns >= self.max_turns, False, {}

    def solution(self):
        return [$solve]

    def close(self):
        pass
"""
_INTROS = (
    r'f"Items: {list(self.values)}. Which has the $extreme value?"',
    r'"Which of " + ", ".join(self.values) + " is $extreme? Use $read, then $answer."',
    r'f"Find the $extreme of {sorted(self.values)} with the tools."',
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    items = list(content.items(int(target.pick(4, 5, 6)), max_len=7))
    largest = rng.random() < 0.6
    extreme = "largest" if largest else "smallest"
    constant = rng.random() < 0.4
    read = rng.choice(["read", "lookup", "inspect", "get_value"])
    answer = rng.choice(["answer", "submit", "choose"])
    item = (("item", "string"),)
    offered = [
        Tool(read, say(rng, "Show an item's value.", "Look up one item."), item),
        Tool(answer, f"Name the {extreme} item.", item),
    ]
    tools = schemas(rng, offered)
    return fill(
        _SOURCE,
        doc=docstring(rng, "Tool lookup."),
        items=f"ITEMS = {literal(items)}\n" if constant else "",
        names="ITEMS" if constant else literal(items),
        module=tools.module,
        tools=tools.attribute,
        cls=class_name(content, rng.choice(["Records", "Lookup", "Ledger", "Survey"])),
        metadata=target.metadata(),
        turns=len(items) + int(target.pick(3, 2, 1)),
        read=read,
        answer=answer,
        extreme=extreme,
        pick="max" if largest else "min",
        low=rng.choice([1, 10, 50]),
        high=rng.choice([900, 999, 5000]),
        intro=rng.choice(_INTROS),
        parse=call_parse(rng, 'item = str(args["item"])'),
        win=say(rng, '"Correct!"', '"Right item."'),
        value_note=say(rng, 'f"{item} = {self.values[item]}"', 'f"{item}: {self.values[item]}"'),
        miss=say(rng, '"Not that."', '"No."', '"Bad call."'),
        score=f"{rng.choice([0.5, 0.6, 0.4])} * len(self.seen) / {len(items)}",
        solve=call(answer, '{"item": self.best}'),
    )


HINTS = (
    "Read every item's value once before answering, and keep the best one seen so far; an "
    "answer given before all items are read is a guess.",
    "Look up each listed item exactly once, compare the values, and only then answer with "
    "the item that wins the comparison.",
    "Do not repeat lookups: each call should reveal a new item, and the final answer follows "
    "from the values collected.",
)
