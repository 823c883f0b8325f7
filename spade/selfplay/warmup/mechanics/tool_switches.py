"""Tool use: switch on every document item; its state is seen by looking or by toggling.

Code fragments are raw strings holding the generated code verbatim, with `$slots`.
"""

from __future__ import annotations

import random

from spade.selfplay.warmup.content import Content

from ._parts import Target, class_name, docstring, fill, literal, say
from ._tools import Tool, call, call_parse, schemas

_SOURCE = r"""${doc}import json
import random

$module

class $cls:
    metadata = $metadata
    max_turns = $turns
$tools

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.on = {k: rng.random() < 0.5 for k in $names}
        self.on[rng.choice(list(self.on))] = False
        self.turns = 0
        return $intro, {}

    def step(self, action):
        self.turns += 1
$parse
        note = $miss
        if item in self.on and name in ("$look", "$flip"):
            if name == "$flip":
                self.on[item] = not self.on[item]
            note = $state_note
        if all(self.on.values()):
            return $win, 1.0, True, False, {}
        return note, $score, self.turns >= self.max_turns, False, {}

    def solution(self):
        return [$solve for k, v in self.on.items() if not v]

    def close(self):
        pass
"""
_INTROS = (
    r'f"Switch on all of {list(self.on)}."',
    r'"Turn on every item: " + ", ".join(self.on) + "."',
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    items = list(content.items(int(target.pick(3, 4, 5)), max_len=7))
    look = rng.choice(["look", "status", "inspect"])
    flip = rng.choice(["toggle", "flip", "switch"])
    thing = rng.choice(["lamp", "valve", "switch", "gate"])
    item = (("item", "string"),)
    offered = [
        Tool(look, say(rng, f"Is this {thing} on?", f"Show a {thing}'s state."), item),
        Tool(flip, say(rng, f"Toggle a {thing}.", f"Flip a {thing} on or off."), item),
    ]
    tools = schemas(rng, offered)
    return fill(
        _SOURCE,
        doc=docstring(rng, f"Tool {thing} puzzle."),
        module=tools.module,
        tools=tools.attribute,
        names=literal(items),
        cls=class_name(content, rng.choice(["Switch", "Panel", "Lights", "Valves"])),
        metadata=target.metadata(),
        turns=2 * len(items) + int(target.pick(2, 1, 0)),
        look=look,
        flip=flip,
        intro=rng.choice(_INTROS),
        parse=call_parse(rng, 'item = str(args["item"])'),
        miss=say(rng, '"Bad call."', '"Unknown item or tool."', '"No."'),
        state_note=say(
            rng,
            """f"{item}: {'on' if self.on[item] else 'off'}" """.strip(),
            'f"{item}: {self.on[item]}"',
        ),
        win=say(rng, '"All on!"', f'"Every {thing} is on."'),
        score=f"{rng.choice([0.9, 0.8])} * sum(self.on.values()) / {len(items)}",
        solve=call(flip, '{"item": k}'),
    )


HINTS = (
    "Look at each item once and toggle only the ones that are off; toggling an item that is "
    "already on undoes progress.",
    "The reply to a toggle tells you the new state, so you can also toggle first and toggle "
    "back if it turned something off.",
    "Go through the items in order and never call a tool twice on an item that is already "
    "in the wanted state.",
)
