"""The text-env scaffold: a base class the designer's code subclasses, so a design is only
what is particular to it.

A complete env (reset, step, the `\\boxed{...}` reader, the turn budget, progress kept in
[0, 1], bad commands answered with feedback instead of an exception, close) takes a 135M
model 40-50 lines, and over that length its code stops holding together (measured on the
warm-started smollm2-135m, 2026-12-02: 0 of 24 designs valid, most failing on syntax). With
the scaffold a design is `setup`, `act` and `solution`: 15-25 lines. The assembled env is
`PRELUDE` followed by the design, one self-contained standard-library file, so the validator,
the sandbox, the memory and frozen suites treat it like any other env.
"""

from __future__ import annotations

from typing import Literal

Scaffold = Literal["none", "text"]
SCAFFOLDS: tuple[Scaffold, ...] = ("none", "text")

# No module docstring: `memory.describe` reads an env's first docstring line as its summary,
# and that line must be the design's, not the scaffold's.
PRELUDE = """\
# spade text-env scaffold (spade.envs.scaffold); the design follows the scaffold.
import random
import re


class TextScaffold:
    max_turns = 10

    def __init__(self, max_turns=None):
        if max_turns is not None:
            self.max_turns = max_turns

    def reset(self, seed=None):
        self.turns, self.progress = 0, 0.0
        return str(self.setup(random.Random(seed))), {}

    def step(self, action):
        self.turns += 1
        commands = re.findall(r"\\\\boxed\\{(.*?)\\}", str(action), re.DOTALL)
        feedback, progress = "Put your command in \\\\boxed{...}.", None
        if commands:
            try:
                feedback, progress = self.act(commands[-1].strip())
            except Exception as error:  # the command is the agent's: a bad one is feedback
                feedback, progress = f"Invalid command ({type(error).__name__}).", None
        if progress is not None:
            self.progress = max(self.progress, min(1.0, max(0.0, float(progress))))
        solved = self.progress >= 1.0
        done = solved or self.turns >= self.max_turns
        if done and not solved:
            feedback = f"{feedback} No turns left."
        return str(feedback), self.progress, done, False, {"turns": self.turns}

    def close(self):
        pass


# --- the design ---
"""


def assemble(design: str, scaffold: Scaffold) -> str:
    """The env source of a design written for `scaffold`."""
    return PRELUDE + design if scaffold == "text" else design


def design_part(source: str) -> str:
    """What the designer wrote of an env source: the source without the scaffold's prelude
    (the whole source when it has none). Near-duplicate checks and memory excerpts compare
    and show this part: every scaffolded env shares the prelude."""
    return source[len(PRELUDE) :] if source.startswith(PRELUDE) else source
