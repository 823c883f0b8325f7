"""Tool use: find a hidden number near a document number with a compare tool, then answer.

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
        self.lo = $low
        self.hi, self.turns = self.lo + $span, 0
        self.secret = rng.randint(self.lo, self.hi)
        return $intro, {}

    def step(self, action):
        self.turns += 1
$parse
        if name == "$answer" and value == self.secret:
            return $win, 1.0, True, False, {}
$update
        return note, $score, self.turns >= self.max_turns, False, {}

    def solution(self):
        return [$solve]

    def close(self):
        pass
"""
# The interval the compare replies leave (its shrinkage is the reward), or the best distance.
_COMPARES = (
    (
        r'''        note = $miss
        if name == "$compare" and value is not None:
            if value < self.secret:
                self.lo, note = max(self.lo, value + 1), "higher"
            else:
                self.hi, note = min(self.hi, value), "lower or equal"''',
        "$cap * (1 - (self.hi - self.lo) / $span)",
    ),
    (
        r"""        note = $miss
        if name == "$compare" and value is not None:
            note = "up" if value < self.secret else "down" if value > self.secret else "equal"
            self.hi = min(self.hi, self.lo + abs(value - self.secret))""",
        "$cap - $cap * (self.hi - self.lo) / $span",
    ),
)
_INTROS = (
    r'f"A secret $what lies in [{self.lo}, {self.hi}]."',
    r'f"Find the hidden $what ({self.lo}-{self.hi})."',
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    span = int(target.pick(rng.choice([31, 63]), rng.choice([127, 255]), rng.choice([511, 1000])))
    anchors = list(content.numbers[:3])
    compare = rng.choice(["compare", "probe", "check"])
    answer = rng.choice(["answer", "submit", "guess"])
    what = say(rng, "number", "value", "year", "count")
    number = (("value", "integer"),)
    ask = say(rng, "Is the secret above a value?", "Compare a value with the secret.")
    offered = [
        Tool(compare, ask, number),
        Tool(answer, say(rng, "Give the secret.", "Final answer."), number),
    ]
    tools = schemas(rng, offered)
    update, score = rng.choice(_COMPARES)
    return fill(
        _SOURCE,
        doc=docstring(rng, "Tool binary search."),
        module=tools.module,
        tools=tools.attribute,
        cls=class_name(content, rng.choice(["Probe", "Oracle", "Finder", "Range"])),
        metadata=target.metadata(),
        turns=span.bit_length() + int(target.pick(3, 2, 1)),
        low=f"rng.choice({literal(anchors)})" if anchors else f"rng.randint(1, {span * 3})",
        span=span,
        intro=rng.choice(_INTROS),
        what=what,
        update=update,
        compare=compare,
        answer=answer,
        parse=call_parse(rng, 'value = int(args["value"])'),
        miss=say(rng, '"Bad call."', '"Wrong."', '"No."'),
        win=say(rng, '"Correct!"', f'"You found the {what}."'),
        score=score,
        cap=rng.choice([0.9, 0.8]),
        solve=call(answer, '{"value": self.secret}'),
    )


HINTS = (
    "Compare with the middle of the range that is still possible and halve it after every "
    "reply; answer only when a single value is left.",
    "Keep track of the lowest and highest values the replies allow and always probe their "
    "midpoint; the range shrinks fast that way.",
    "Never probe outside the remaining interval: each compare call should cut the candidates "
    "in half before you answer.",
)
