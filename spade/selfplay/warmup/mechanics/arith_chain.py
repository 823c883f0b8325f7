"""A chain of arithmetic steps revealed one at a time; each intermediate result is checked.

Code fragments are raw strings holding the generated code verbatim, with `$slots`.
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
        self.start = value = rng.choice($starts)
        self.ops, self.answers = [], []
        for _ in range($steps):
$pick
            self.ops.append(f"{op} {k}")
            self.answers.append(value)
        self.done = self.turns = $counters
        return $intro, {}

    def step(self, action):
        self.turns += 1
$read
$check

    def solution(self):
        return [$answer for n in self.answers]

    def close(self):
        pass
"""

# A wrong answer is asked again (the budget runs out), or recorded and the chain moves on
# (the episode ends after the last step with the share answered right).
_CHECKS = (
    (
        "0",
        r"""        if text == str(self.answers[self.done]):
            self.done += 1
            if self.done == $steps:
                return $win, 1.0, True, False, {}
            note = $right
        else:
            note = $wrong
        return note, $score, self.turns >= self.max_turns, False, {}""",
    ),
    (
        "self.right = 0",
        r"""        self.right += text == str(self.answers[self.done])
        self.done += 1
        if self.done == $steps:
            return $end_note, self.right / $steps, True, False, {}
        return $moved_note, $moved_score, self.turns >= self.max_turns, False, {}""",
    ),
)
_PICKS = (
    r"""            op, k = rng.choice("+-*"), rng.randint(2, $top)
            if op == "-" and k > value:
                op = "+"
            value = value + k if op == "+" else value - k if op == "-" else value * k""",
    r"""            op, k = rng.choice(["add", "minus", "times"]), rng.randint(2, $top)
            if op == "minus" and k > value:
                op = "add"
            value = {"add": value + k, "minus": value - k, "times": value * k}[op]""",
)
_INTROS = (
    r'f"Start at {self.start}. Answer each running result as \\boxed{{N}}. Step 1: {self.ops[0]}"',
    r'f"$what begins at {self.start}. Apply {self.ops[0]} and reply \\boxed{{result}}."',
)


_KIT_SOURCE = r"""$doc
class $cls(TextScaffold):
    metadata = $metadata
    max_turns = $turns

    def setup(self, rng):
        self.start = value = rng.choice($starts)
        self.ops, self.answers = [], []
        for _ in range($steps):
$pick
            self.ops.append(f"{op} {k}")
            self.answers.append(value)
        self.done = $counters
        return $intro

    def act(self, command):
$check

    def solution(self):
        return [$answer for n in self.answers]
"""

# As in `build`: a wrong answer is asked again, or recorded and the chain moves on (then
# max_turns is the number of steps, so the last answer ends the episode).
_KIT_CHECKS = (
    (
        "0",
        r"""        if command != str(self.answers[self.done]):
            return $wrong, None
        self.done += 1
        if self.done == $steps:
            return $win, 1.0
        return $right, $score""",
    ),
    (
        "self.right = 0",
        r"""        self.right += command == str(self.answers[self.done])
        self.done += 1
        if self.done == $steps:
            return $end_note, self.right / $steps
        return $moved_note, $moved_score""",
    ),
)


def build(rng: random.Random, content: Content, target: Target) -> str:
    return fill(_SOURCE, **_slots(rng, content, target, kit=False))


def build_kit(rng: random.Random, content: Content, target: Target) -> str:
    """The same env as `build` on the text-env scaffold: the design only."""
    return fill(_KIT_SOURCE, **_slots(rng, content, target, kit=True))


def _slots(rng: random.Random, content: Content, target: Target, *, kit: bool) -> dict[str, object]:
    """The slots of `_SOURCE` (with a reader) or, with `kit`, of `_KIT_SOURCE`. The draws
    from `rng` keep their order, so a seed still gives the same env."""
    steps = int(target.pick(3, 4, 5))
    starts = [n for n in content.numbers if n < 1000][:3] or [rng.randint(2, 60) for _ in range(3)]
    slots = {} if kit else read_slots(rng)
    counters, check = rng.choice(_KIT_CHECKS if kit else _CHECKS)
    moves_on = counters != "0"
    command = "command" if kit else "text"  # the name the check reads the command from
    return slots | dict(
        doc=docstring(rng, "Step-by-step arithmetic with checks.", "A running-total chain."),
        cls=class_name(content, rng.choice(["Chain", "Steps", "Tally", "Count"])),
        metadata=target.metadata(),
        turns=steps if moves_on else steps + int(target.pick(4, 3, 2)),
        counters=counters,
        check=check,
        end_note=say(
            rng, 'f"Done: {self.right} of $steps right."', 'f"Score {self.right}/$steps."'
        ),
        moved_note=say(
            rng,
            'f"Noted. Next: {self.ops[self.done]}"',
            "f\"{'Right' if " + command + " == str(self.answers[self.done - 1]) else 'Wrong'}. "
            'Now {self.ops[self.done]}"',
        ),
        moved_score=f"{rng.choice([0.9, 0.8])} * self.right / {steps}",
        starts=literal(starts),
        steps=steps,
        pick=rng.choice(_PICKS),
        top=int(target.pick(5, 9, 12)),
        intro=rng.choice(_INTROS),
        what=content.label(),
        win=say(rng, '"All steps right!"', '"Chain complete."', '"Correct to the end."'),
        right=say(
            rng, 'f"Right. Next: {self.ops[self.done]}"', 'f"Yes. Now {self.ops[self.done]}."'
        ),
        wrong=say(rng, 'f"No. Redo: {self.ops[self.done]}"', '"Wrong, try again."'),
        score=say(
            rng, f"self.done / {steps + 1}", f"{rng.choice([0.9, 0.8])} * self.done / {steps}"
        ),
        answer=say(rng, r'f"\\boxed{{{n}}}"', r'"\\boxed{%d}" % n'),
    )


HINTS = (
    "Work one step at a time: apply the operation to your previous result, double-check the "
    "arithmetic, and answer only that intermediate value.",
    "Keep the running value written down and update it with each new operation; a wrong "
    "answer usually comes from using the start value instead of the latest result.",
    "Multiply and subtract carefully from the latest correct result; the next operation only "
    "appears after the current answer is accepted.",
)
