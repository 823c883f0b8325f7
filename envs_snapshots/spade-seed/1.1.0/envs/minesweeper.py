"""Minesweeper on a small board that is always solvable by logic alone (constraint deduction)."""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_COMMAND = re.compile(r"^(reveal|flag)\s+(\d+)\s*[, ]\s*(\d+)$")
SIZE = 6


def neighbours(cell):
    r, c = cell
    return [
        (r + dr, c + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= r + dr < SIZE and 0 <= c + dc < SIZE
    ]


class MinesweeperEnv:
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

    def __init__(self, max_turns: int = 45):
        self.max_turns = max_turns
        self._rng = random.Random()

    def reset(self, seed=None):
        self._rng = random.Random(seed)
        self.mines, start, self._order = self._generate()
        self.counts = {
            (r, c): sum(n in self.mines for n in neighbours((r, c)))
            for r in range(SIZE)
            for c in range(SIZE)
        }
        self.revealed, self.flags = set(), set()
        self._reveal(start)
        self.hidden_at_start = SIZE * SIZE - len(self.mines) - len(self.revealed)
        self.turns = 0
        obs = (
            f"Minesweeper, {SIZE}x{SIZE} board with {len(self.mines)} mines. An opening has "
            "been revealed for you. Numbers count mines among the 8 neighbours; '.' is 0, '#' "
            "is hidden, 'F' is your flag. Reveal every safe cell to win; revealing a mine "
            "loses. No guessing is ever needed. Commands: \\boxed{reveal R C} or "
            "\\boxed{flag R C} (toggles a flag), rows and columns numbered from 1.\n"
            + self._render()
        )
        return obs, {"mines": len(self.mines), "size": SIZE}

    # ----- board generation -------------------------------------------------------------
    def _generate(self):
        """Draw boards until one can be cleared by pure deduction from a zero-cell opening."""
        cells = [(r, c) for r in range(SIZE) for c in range(SIZE)]
        while True:
            mines = set(self._rng.sample(cells, self._rng.randint(6, 8)))
            zeros = [x for x in cells if x not in mines and not any(n in mines for n in neighbours(x))]
            if not zeros:
                continue
            start = self._rng.choice(zeros)
            order = _deduce(mines, start)
            if order is not None and len(order) >= 8:
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
                stack.extend(n for n in neighbours(cur) if n not in self.revealed)

    def _render(self) -> str:
        rows = ["   " + " ".join(str(c + 1) for c in range(SIZE))]
        for r in range(SIZE):
            marks = []
            for c in range(SIZE):
                if (r, c) in self.revealed:
                    marks.append(str(self.counts[(r, c)]) if self.counts[(r, c)] else ".")
                else:
                    marks.append("F" if (r, c) in self.flags else "#")
            rows.append(f"{r + 1:>2} " + " ".join(marks))
        return "\n".join(rows)

    def _progress(self) -> float:
        safe_total = SIZE * SIZE - len(self.mines)
        opened = len(self.revealed) - (safe_total - self.hidden_at_start)
        return 0.9 * opened / self.hidden_at_start

    def _parse(self, action: str):
        found = _BOXED.findall(action)
        match = _COMMAND.match(found[-1].strip().lower()) if found else None
        if not match:
            return None
        r, c = int(match.group(2)) - 1, int(match.group(3)) - 1
        if not (0 <= r < SIZE and 0 <= c < SIZE):
            return None
        return match.group(1), (r, c)

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        parsed = self._parse(action)
        if parsed is None:
            obs = f"Invalid command: use \\boxed{{reveal R C}} or \\boxed{{flag R C}} with R, C in 1..{SIZE}."
        else:
            verb, cell = parsed
            if verb == "flag":
                obs = self._toggle_flag(cell)
            elif cell in self.mines:
                obs = f"BOOM! Row {cell[0] + 1}, column {cell[1] + 1} was a mine. You lose."
                return obs, round(self._progress(), 4), True, False, info
            else:
                self._reveal(cell)
                if len(self.revealed) + len(self.mines) == SIZE * SIZE:
                    return "All safe cells revealed. You win!\n" + self._render(), 1.0, True, False, info
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
                revealed |= _flood(cell, self.mines)
        return actions

    def close(self):
        pass


def _flood(cell, mines):
    """Cells revealed by clicking a safe cell (zero cells cascade)."""
    seen, stack = set(), [cell]
    while stack:
        cur = stack.pop()
        if cur in seen:
            continue
        seen.add(cur)
        if not any(n in mines for n in neighbours(cur)):
            stack.extend(neighbours(cur))
    return seen


def _deduce(mines, start):
    """Solve the board with the single-cell and subset rules. Return the safe cells in the
    order they were deduced (excluding the opening), or None when logic alone gets stuck."""
    safe_total = SIZE * SIZE - len(mines)
    known_safe, known_mines = _flood(start, mines), set()
    order = []
    while len(known_safe) < safe_total:
        constraints = []
        for cell in known_safe:
            hidden = frozenset(n for n in neighbours(cell) if n not in known_safe and n not in known_mines)
            if hidden:
                left = sum(n in mines for n in neighbours(cell)) - sum(n in known_mines for n in neighbours(cell))
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
                known_safe |= _flood(cell, mines)
    return order
