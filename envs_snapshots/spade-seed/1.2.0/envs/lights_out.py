"""Lights Out: pressing a light toggles it and its orthogonal neighbours; switch every light
off (planning with XOR structure: order does not matter and a double press cancels).

Difficulty levels grow the board and the number of presses that made it."""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_PRESS = re.compile(r"^(?:press\s+)?(\d+)\s*[, ]\s*(\d+)$")

# Difficulty levels: (board sizes, range of presses that made the board, least lit cells at
# the start, press budget). The top level is the original task.
LEVELS = [
    ([3], (2, 3), 4, 6),
    ([3], (3, 4), 5, 10),
    ([4], (3, 5), 6, 20),
    ([4, 5], (4, 6), 6, 30),
    ([4, 5], (4, 7), 6, 40),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


class LightsOutEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "train",
        "skill": "planning",
        "difficulty": "hard",
        "hint": "Presses commute and pressing twice undoes a press, so think of the solution "
        "as a set of cells. Chase the lights down: for each row from the top, press the cell "
        "directly below every light that is on, which clears that row. Whatever stays lit in "
        "the bottom row tells you which top-row cells should have been pressed; work that out "
        "by reasoning about how top-row presses propagate, press them, and chase again.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][3]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        sizes, presses, min_lit, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.size = self._rng.choice(sizes)
        cells = [(r, c) for r in range(self.size) for c in range(self.size)]
        while True:
            self.presses = sorted(self._rng.sample(cells, self._rng.randint(*presses)))
            self.lit = set()
            for cell in self.presses:
                self._toggle(cell)
            if len(self.lit) >= min_lit:
                break
        self.start_lit = len(self.lit)
        self.turns = 0
        obs = (
            f"Lights Out on a {self.size}x{self.size} grid ('O' on, '.' off). Pressing a cell "
            "toggles it and its up/down/left/right neighbours. Switch every light off within "
            f"{self.max_turns} presses. Press with \\boxed{{R C}} (row and column from 1).\n"
            + self._render()
        )
        return obs, {"size": self.size}

    def _toggle(self, cell):
        r, c = cell
        for nr, nc in ((r, c), (r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nr < self.size and 0 <= nc < self.size:
                self.lit ^= {(nr, nc)}

    def _render(self) -> str:
        lines = ["  " + " ".join(str(c + 1) for c in range(self.size))]
        for r in range(self.size):
            row = " ".join("O" if (r, c) in self.lit else "." for c in range(self.size))
            lines.append(f"{r + 1} {row}")
        return "\n".join(lines)

    def _progress(self) -> float:
        # Partial credit: how far the number of lit cells has fallen from the start.
        return round(0.9 * max(0.0, 1 - len(self.lit) / self.start_lit), 4)

    def _parse(self, action: str):
        found = _BOXED.findall(action)
        match = _PRESS.match(found[-1].strip().lower()) if found else None
        if not match:
            return None
        r, c = int(match.group(1)) - 1, int(match.group(2)) - 1
        return (r, c) if 0 <= r < self.size and 0 <= c < self.size else None

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns, "lit": len(self.lit)}
        cell = self._parse(action)
        if cell is None:
            obs = f"Invalid press: use \\boxed{{R C}} with R and C between 1 and {self.size}."
        else:
            self._toggle(cell)
            info["lit"] = len(self.lit)
            if not self.lit:
                return "All lights are off. Solved!", 1.0, True, False, info
            obs = f"Pressed ({cell[0] + 1}, {cell[1] + 1})."
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        out_of_turns = self.turns >= self.max_turns
        obs += "\n" + self._render() + ("\nOut of presses." if out_of_turns else "")
        return obs, self._progress(), out_of_turns, False, info

    def solution(self):
        # The board was made by pressing these cells once each; pressing them again undoes it.
        return [f"\\boxed{{{r + 1} {c + 1}}}" for r, c in self.presses]

    def close(self):
        pass
