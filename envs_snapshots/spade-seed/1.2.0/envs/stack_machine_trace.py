"""Trace a small stack-machine program with a counted loop, reporting the stack at checkpoints.

The agent sees the listing and must report the stack every time a JNZ instruction executes
and once more when the program halts. Each report is checked and, if wrong, corrected, so a
slip costs one checkpoint rather than the whole trace. Teaches program tracing: exact
operand order, loop control and the state carried across iterations. Difficulty levels grow
the loop count (two passes at level 0, three to five at the top), the loop body and the
value kept below the loop.
"""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_LIMIT = 100_000  # largest magnitude a stack value may reach

# Loop bodies: each maps the stack [..., acc, n] to [..., new acc].
_TRANSFORMS = [
    ["ADD"],
    ["SUB"],
    ["MUL"],
    ["SWAP", "SUB"],
    ["DUP", "MUL", "ADD"],
    ["PUSH {c}", "ADD", "ADD"],
    ["PUSH {c}", "MUL", "ADD"],
    ["PUSH {c}", "MUL", "SUB"],
    ["PUSH {c}", "SUB", "MUL"],
]
# Difficulty levels: (chance of a value below the loop, loop counts, transforms per body,
# transform pool, turn budget). The top level is the original task.
LEVELS = [
    (0.0, (2, 2), (1, 1), _TRANSFORMS[:3], 5),
    (0.0, (2, 3), (1, 1), _TRANSFORMS, 6),
    (0.5, (3, 4), (1, 1), _TRANSFORMS, 8),
    (0.5, (3, 4), (1, 2), _TRANSFORMS, 9),
    (0.5, (3, 5), (1, 2), _TRANSFORMS, 12),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


_RULES = (
    "PUSH v pushes v; ADD, SUB, MUL pop b (top) then a and push a+b, a-b, a*b; DUP copies "
    "the top; SWAP swaps the top two; OVER pushes a copy of the second from top; DROP pops; "
    "JNZ t pops the top and jumps to line t if it is not zero."
)


def _boxed(action):
    """Content of the last \\boxed{...} in the action, or None."""
    found = _BOXED.findall(action) if isinstance(action, str) else []
    return found[-1].strip() if found else None


def _parse_stack(text):
    """A stack written bottom to top, e.g. '3, -4' or 'empty'; None if unparseable."""
    text = text.strip("[]() ")
    if text.lower() in ("", "empty"):
        return []
    try:
        return [int(token) for token in text.replace(",", " ").split()]
    except ValueError:
        return None


def _execute(op, stack):
    """Apply one non-jump instruction to the stack in place."""
    name, *arg = op.split()
    if name == "PUSH":
        stack.append(int(arg[0]))
    elif name in ("ADD", "SUB", "MUL"):
        b, a = stack.pop(), stack.pop()
        stack.append({"ADD": a + b, "SUB": a - b, "MUL": a * b}[name])
    elif name == "DUP":
        stack.append(stack[-1])
    elif name == "SWAP":
        stack[-1], stack[-2] = stack[-2], stack[-1]
    elif name == "OVER":
        stack.append(stack[-2])
    elif name == "DROP":
        stack.pop()


def _checkpoints(program):
    """Run the program; return the stack after every JNZ and at the end, or None if too big."""
    stack, pc, snapshots = [], 0, []
    while pc < len(program):
        name, *arg = program[pc].split()
        pc += 1
        if name == "JNZ":
            if stack.pop() != 0:
                pc = int(arg[0])
            snapshots.append(list(stack))
        else:
            _execute(program[pc - 1], stack)
        if any(abs(v) > _LIMIT for v in stack):
            return None
    return snapshots + [list(stack)]


def _accumulator_moves(snapshots):
    """True when the value under the loop counter changes on every pass (no dull traces)."""
    values = [stack[-2] for stack in snapshots[:-1]]
    return len(set(values)) == len(values)


class StackMachineTraceEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "heldout",
        "skill": "program tracing",
        "difficulty": "hard",
        "hint": "Write the stack bottom to top after every single instruction, not only at the "
        "checkpoints. For SUB the second-from-top value comes first (a - b with b on top). "
        "Each loop pass decrements the counter and JNZ pops its copy, so the report after a "
        "JNZ shows the stack without that copy. When a report is corrected, continue from "
        "the corrected stack.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.below_chance, self.counts, self.n_transforms, self.pool, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.program, self.expected = None, None
        while not self.expected or not _accumulator_moves(self.expected):
            self.program = self._random_program()
            self.expected = _checkpoints(self.program)
        self.reported = 0
        self.correct = 0
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        listing = "\n".join(f"{i}: {op}" for i, op in enumerate(self.program))
        obs = (
            f"Program (runs from line 0 until it falls off the end):\n{listing}\n{_RULES}\n"
            "Report the stack, bottom to top, each time a JNZ has executed and once after the "
            "program ends, e.g. \\boxed{7, -2} or \\boxed{empty}. "
            f"There are {len(self.expected)} reports; you have {self.max_turns} turns."
        )
        return obs, {"reports": len(self.expected)}

    def _random_program(self):
        rng = self._rng
        below = [f"PUSH {rng.randint(1, 9)}"] if rng.random() < self.below_chance else []
        start = rng.choice([v for v in range(-5, 10) if v])
        head = below + [f"PUSH {start}", f"PUSH {rng.randint(*self.counts)}"]
        loop_start = len(head)
        body = ["SWAP"]
        for template in rng.sample(self.pool, rng.randint(*self.n_transforms)):
            body += ["OVER"] + [op.format(c=rng.randint(2, 4)) for op in template]
        body += ["SWAP", "PUSH 1", "SUB", "DUP", f"JNZ {loop_start}", "DROP"]
        tail = [rng.choice(["ADD", "SUB", "MUL"])] if below else []
        return head + body + tail

    def _report(self, stack):
        expected = self.expected[self.reported]
        self.reported += 1
        if stack == expected:
            self.correct += 1
            verdict = f"Report {self.reported} correct."
        else:
            shown = ", ".join(map(str, expected)) or "empty"
            verdict = f"Report {self.reported} wrong; the stack was [{shown}]."
        if self.reported == len(self.expected):
            return f"{verdict} The program has ended.", True
        return f"{verdict} Continue to the next checkpoint.", False

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        content = _boxed(action)
        stack = _parse_stack(content) if content is not None else None
        if stack is None:
            obs, done = "Invalid action: box the stack bottom to top, e.g. \\boxed{3, -1}.", False
        else:
            obs, done = self._report(stack)
        self.reward = self.correct / len(self.expected)
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "reported": self.reported, "correct": self.correct}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        return ["\\boxed{" + (", ".join(map(str, s)) or "empty") + "}" for s in self.expected]

    def close(self):
        pass
