"""Battleship: find and sink a hidden fleet with a limited number of shots (grid search).

Difficulty levels grow the grid and the fleet; level 0 is one two-cell ship on a 4x4 grid."""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_SHOT = re.compile(r"^([a-z])\s*(\d+)$")
ROWS = "ABCDEFGH"

# Difficulty levels: (grid size, ship lengths, shot budget). The top level is the original
# task; level 0 fits a short episode.
LEVELS = [
    (4, (2,), 6),
    (5, (3, 2), 12),
    (6, (3, 2, 2), 20),
    (7, (4, 3, 2), 30),
    (8, (4, 3, 3, 2), 40),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


class BattleshipEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "heldout",
        "skill": "search",
        "difficulty": "easy",
        "hint": "Hunt on a checkerboard pattern: every ship is at least two cells long, so "
        "it must cover a cell of one colour. After a hit, probe the four neighbours to find "
        "the ship's direction, then follow that line both ways until it sinks. Ships never "
        "touch, so cells around a sunk ship are empty and need no shots.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][2]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.size, self.fleet, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.ships = self._place_fleet()
        self.shots = {}
        self.turns = 0
        size = self.size
        if len(self.fleet) > 1:
            ships = (
                f"ships of lengths {', '.join(map(str, self.fleet))} lie straight (horizontal "
                "or vertical) and never touch each other, not even diagonally. Sink them all"
            )
        else:  # one ship: no touching rule to state
            ships = (
                f"ship of length {self.fleet[0]} lies straight (horizontal or vertical). Sink it"
            )
        obs = (
            f"Battleship on {'an' if size == 8 else 'a'} {size}x{size} grid (rows "
            f"A-{ROWS[size - 1]}, columns 1-{size}). Hidden {ships} within {self.max_turns} "
            f"shots. Fire with \\boxed{{C{min(5, size)}}} (row letter, column number). Each "
            "reply says miss, hit, or sunk.\n" + self._render()
        )
        return obs, {"fleet": list(self.fleet), "size": size}

    def _place_fleet(self):
        """Place ships one by one at random; restart if a ship cannot fit."""
        while True:
            ships, blocked = [], set()
            for length in self.fleet:
                spots = [s for s in self._all_spots(length) if not blocked & set(s)]
                if not spots:
                    break
                ship = self._rng.choice(spots)
                ships.append(ship)
                blocked |= {
                    (r + dr, c + dc) for r, c in ship for dr in (-1, 0, 1) for dc in (-1, 0, 1)
                }
            else:
                return ships

    def _all_spots(self, length):
        spots = []
        for r in range(self.size):
            for c in range(self.size - length + 1):
                spots.append(tuple((r, c + i) for i in range(length)))
                spots.append(tuple((c + i, r) for i in range(length)))
        return spots

    def _render(self) -> str:
        size = self.size
        lines = ["  " + "".join(str(c + 1) for c in range(size))]
        for r in range(size):
            lines.append(ROWS[r] + " " + "".join(self.shots.get((r, c), ".") for c in range(size)))
        return "\n".join(lines) + "\n(X hit, o miss, . unknown)"

    def _hits(self) -> int:
        return sum(mark == "X" for mark in self.shots.values())

    def _parse(self, action: str):
        found = _BOXED.findall(action)
        match = _SHOT.match(found[-1].strip().lower()) if found else None
        if not match:
            return None
        r, c = ord(match.group(1)) - ord("a"), int(match.group(2)) - 1
        return (r, c) if 0 <= r < self.size and 0 <= c < self.size else None

    def _fire(self, cell) -> str:
        name = f"{ROWS[cell[0]]}{cell[1] + 1}"
        if cell in self.shots:
            return f"You already fired at {name}."
        ship = next((s for s in self.ships if cell in s), None)
        self.shots[cell] = "X" if ship else "o"
        if ship is None:
            return f"{name}: miss."
        if all(self.shots.get(part) == "X" for part in ship):
            return f"{name}: hit and sunk a ship of length {len(ship)}!"
        return f"{name}: hit."

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        cell = self._parse(action)
        if cell is None:
            obs = (
                f"Invalid shot: use a row letter A-{ROWS[self.size - 1]} and a column "
                f"1-{self.size}, e.g. \\boxed{{D4}}."
            )
        else:
            obs = self._fire(cell)
        total = sum(self.fleet)
        if self._hits() == total:
            return obs + " The whole fleet is sunk. You win!", 1.0, True, False, info
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        out_of_turns = self.turns >= self.max_turns
        if out_of_turns:
            obs += " Out of shots."
        obs += "\n" + self._render()
        return obs, round(0.9 * self._hits() / total, 4), out_of_turns, False, info

    def solution(self):
        return [f"\\boxed{{{ROWS[r]}{c + 1}}}" for ship in self.ships for r, c in ship]

    def close(self):
        pass
