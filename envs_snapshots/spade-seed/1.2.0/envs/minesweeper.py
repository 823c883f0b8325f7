"""Minesweeper on a small board that is always solvable by logic alone (constraint deduction).

Difficulty levels grow the board, the mines and the number of deductions needed."""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_COMMAND = re.compile(r"^(reveal|flag)\s+(\d+)\s*[, ]\s*(\d+)$")

# Difficulty levels: (board size, mine count range, range of deduced cells the board needs,
# turn budget). The top level is the original task (36 deductions means no upper bound).
LEVELS = [
    (4, (2, 3), (2, 3), 6),
    (5, (3, 4), (3, 5), 12),
    (5, (4, 6), (5, 12), 18),
    (6, (5, 7), (6, 20), 30),
    (6, (6, 8), (8, 36), 45),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def neighbours(cell, size):
    r, c = cell
    return [
        (r + dr, c + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= r + dr < size and 0 <= c + dc < size
    ]


class MinesweeperEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "heldout",
        "skill": "deduction",
        "difficulty": "hard",
        "hint": "Never guess: every board can be cleared by logic. A number equal to its count "
        "of hidden neighbours means they are all mines; a number whose mines are all flagged "
        "means its other hidden neighbours are safe. When that stalls, compare two "
        "overlapping numbers: if one's hidden neighbours are a subset of the other's, the "
        "difference of their remaining counts is the number of mines in the cells they do "
        "not share.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][3]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.size, mine_counts, deductions, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.mines, start, self._order = self._generate(mine_counts, deductions)
        size = self.size
        self.counts = {
            (r, c): sum(n in self.mines for n in neighbours((r, c), size))
            for r in range(size)
            for c in range(size)
        }
        self.revealed, self.flags = set(), set()
        self._reveal(start)
        self.hidden_at_start = size * size - len(self.mines) - len(self.revealed)
        self.turns = 0
        obs = (
            f"Minesweeper, {size}x{size} board with {len(self.mines)} mines. An opening has "
            "been revealed for you. Numbers count mines among the 8 neighbours; '.' is 0, '#' "
            "is hidden, 'F' is your flag. Reveal every safe cell to win; revealing a mine "
            "loses. No guessing is ever needed. Commands: \\boxed{reveal R C} or "
            "\\boxed{flag R C} (toggles a flag), rows and columns numbered from 1.\n"
            + self._render()
        )
        return obs, {"mines": len(self.mines), "size": size}

    # ----- board generation -------------------------------------------------------------
    def _generate(self, mine_counts, deductions):
        """Draw boards until one can be cleared by pure deduction from a zero-cell opening."""
        size = self.size
        cells = [(r, c) for r in range(size) for c in range(size)]
        while True:
            mines = set(self._rng.sample(cells, self._rng.randint(*mine_counts)))
            zeros = [
                x
                for x in cells
                if x not in mines and not any(n in mines for n in neighbours(x, size))
            ]
            if not zeros:
                continue
            start = self._rng.choice(zeros)
            order = _deduce(mines, start, size)
            if order is not None and deductions[0] <= len(order) <= deductions[1]:
                return mines, start, order

    # ----- game mechanics ---------------------------------------------------------------
    def _reveal(self, cell):
        """Reveal a safe cell; zero cells open their neighbours automatically."""
        stack = [cell]
        while stack:
            cur = stack.pop()
            if cur in self.revealed:
                continue
            self.revealed.add(cur)
            self.flags.discard(cur)
            if self.counts[cur] == 0:
                stack.extend(n for n in neighbours(cur, self.size) if n not in self.revealed)

    def _render(self) -> str:
        rows = ["   " + " ".join(str(c + 1) for c in range(self.size))]
        for r in range(self.size):
            marks = []
            for c in range(self.size):
                if (r, c) in self.revealed:
                    marks.append(str(self.counts[(r, c)]) if self.counts[(r, c)] else ".")
                else:
                    marks.append("F" if (r, c) in self.flags else "#")
            rows.append(f"{r + 1:>2} " + " ".join(marks))
        return "\n".join(rows)

    def _progress(self) -> float:
        safe_total = self.size * self.size - len(self.mines)
        opened = len(self.revealed) - (safe_total - self.hidden_at_start)
        return 0.9 * opened / self.hidden_at_start

    def _parse(self, action: str):
        found = _BOXED.findall(action)
        match = _COMMAND.match(found[-1].strip().lower()) if found else None
        if not match:
            return None
        r, c = int(match.group(2)) - 1, int(match.group(3)) - 1
        if not (0 <= r < self.size and 0 <= c < self.size):
            return None
        return match.group(1), (r, c)

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        parsed = self._parse(action)
        if parsed is None:
            obs = (
                f"Invalid command: use \\boxed{{reveal R C}} or \\boxed{{flag R C}} with R, C "
                f"in 1..{self.size}."
            )
        else:
            verb, cell = parsed
            if verb == "flag":
                obs = self._toggle_flag(cell)
            elif cell in self.mines:
                obs = f"BOOM! Row {cell[0] + 1}, column {cell[1] + 1} was a mine. You lose."
                return obs, round(self._progress(), 4), True, False, info
            else:
                self._reveal(cell)
                if len(self.revealed) + len(self.mines) == self.size * self.size:
                    return (
                        "All safe cells revealed. You win!\n" + self._render(),
                        1.0,
                        True,
                        False,
                        info,
                    )
                obs = "Revealed.\n" + self._render()
        truncated = self.turns >= self.max_turns
        if truncated:
            obs += "\nOut of turns."
        return obs, round(self._progress(), 4), False, truncated, info

    def _toggle_flag(self, cell) -> str:
        if cell in self.revealed:
            return "That cell is already revealed.\n" + self._render()
        self.flags ^= {cell}
        return "Flag toggled.\n" + self._render()

    def solution(self):
        actions, revealed = [], set(self.revealed)
        for cell in self._order:
            if cell not in revealed:
                actions.append(f"\\boxed{{reveal {cell[0] + 1} {cell[1] + 1}}}")
                revealed |= _flood(cell, self.mines, self.size)
        return actions

    def close(self):
        pass


def _flood(cell, mines, size):
    """Cells revealed by clicking a safe cell (zero cells cascade)."""
    seen, stack = set(), [cell]
    while stack:
        cur = stack.pop()
        if cur in seen:
            continue
        seen.add(cur)
        if not any(n in mines for n in neighbours(cur, size)):
            stack.extend(neighbours(cur, size))
    return seen


def _deduce(mines, start, size):
    """Solve the board with the single-cell and subset rules. Return the safe cells in the
    order they were deduced (excluding the opening), or None when logic alone gets stuck."""
    safe_total = size * size - len(mines)
    known_safe, known_mines = _flood(start, mines, size), set()
    order = []
    while len(known_safe) < safe_total:
        constraints = []
        for cell in known_safe:
            near = neighbours(cell, size)
            hidden = frozenset(n for n in near if n not in known_safe and n not in known_mines)
            if hidden:
                left = sum(n in mines for n in near) - sum(n in known_mines for n in near)
                constraints.append((hidden, left))
        new_safe, new_mines = set(), set()
        for hidden, left in constraints:
            if left == 0:
                new_safe |= hidden
            elif left == len(hidden):
                new_mines |= hidden
        if not new_safe and not new_mines:
            for small, k1 in constraints:
                for big, k2 in constraints:
                    if small < big:
                        rest = big - small
                        if k2 - k1 == 0:
                            new_safe |= rest
                        elif k2 - k1 == len(rest):
                            new_mines |= rest
        if not new_safe and not new_mines:
            return None
        known_mines |= new_mines
        for cell in sorted(new_safe):
            if cell not in known_safe:
                order.append(cell)
                known_safe |= _flood(cell, mines, size)
    return order
