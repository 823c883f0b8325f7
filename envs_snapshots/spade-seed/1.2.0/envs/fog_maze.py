"""Escape a maze you cannot see: only the walls around your own cell are visible, so you
must explore systematically and remember where you have been (exploration, spatial memory).

Difficulty levels grow the maze from 2x2 rooms to the original 5x6/6x6."""

import random
import re
from collections import deque

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
MOVES = {"north": (-1, 0), "south": (1, 0), "west": (0, -1), "east": (0, 1)}
ALIASES = {
    "n": "north",
    "s": "south",
    "w": "west",
    "e": "east",
    "up": "north",
    "down": "south",
    "left": "west",
    "right": "east",
}

# Difficulty levels: (maze shapes, move budget). The budget leaves room to explore every
# corridor and walk back (2 moves per passage); the top level is the original task.
LEVELS = [
    ([(2, 2)], 6),
    ([(3, 3)], 20),
    ([(3, 4), (4, 3)], 30),
    ([(4, 5), (5, 4)], 50),
    ([(5, 6), (6, 6), (6, 5)], 80),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


class FogMazeEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "train",
        "skill": "exploration",
        "difficulty": "medium",
        "hint": "The maze has no loops, so a depth-first search never gets lost: keep a map of "
        "visited cells, prefer unexplored openings that head toward the exit, and when you hit "
        "a dead end backtrack to the most recent cell that still has an unexplored opening. "
        "Keeping one hand on the wall (always try right, then straight, then left, then back) "
        "also works, but is slower.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        shapes, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.rows, self.cols = self._rng.choice(shapes)
        self.open = self._carve()
        self.pos = (self._rng.randrange(self.rows), self._rng.randrange(self.cols))
        distances = self._distances_from(self.pos)
        self.exit = max(sorted(distances), key=distances.get)
        self.to_exit = self._distances_from(self.exit)
        self.start_dist = self.to_exit[self.pos]
        self.best = 0.0
        self.turns = 0
        obs = (
            f"You are lost in a {self.rows}x{self.cols} maze of square rooms, rows 1-{self.rows} "
            f"top to bottom and columns 1-{self.cols} left to right. Fog hides everything but "
            "the doorways of your current room. Reach the exit at "
            f"(row {self.exit[0] + 1}, col {self.exit[1] + 1}) within {self.max_turns} moves. "
            "Move one room per turn with \\boxed{north}, \\boxed{south}, \\boxed{east} or "
            "\\boxed{west}.\n" + self._describe()
        )
        return obs, {"rows": self.rows, "cols": self.cols}

    def _carve(self):
        """Randomised depth-first search: a perfect maze (exactly one path between rooms)."""
        open_ = {(r, c): set() for r in range(self.rows) for c in range(self.cols)}
        stack, seen = [(0, 0)], {(0, 0)}
        while stack:
            cell = stack[-1]
            options = [(d, n) for d, n in self._neighbours(cell) if n not in seen]
            if not options:
                stack.pop()
                continue
            direction, nxt = self._rng.choice(options)
            open_[cell].add(direction)
            open_[nxt].add(_opposite(direction))
            seen.add(nxt)
            stack.append(nxt)
        return open_

    def _neighbours(self, cell):
        for direction, (dr, dc) in MOVES.items():
            r, c = cell[0] + dr, cell[1] + dc
            if 0 <= r < self.rows and 0 <= c < self.cols:
                yield direction, (r, c)

    def _distances_from(self, origin):
        dist, queue = {origin: 0}, deque([origin])
        while queue:
            cell = queue.popleft()
            for direction in self.open[cell]:
                nxt = _move(cell, direction)
                if nxt not in dist:
                    dist[nxt] = dist[cell] + 1
                    queue.append(nxt)
        return dist

    def _describe(self) -> str:
        doors = ", ".join(d for d in MOVES if d in self.open[self.pos])
        return f"You are at (row {self.pos[0] + 1}, col {self.pos[1] + 1}). Doorways: {doors}."

    def _parse(self, action: str):
        found = _BOXED.findall(action)
        word = found[-1].strip().lower() if found else ""
        word = ALIASES.get(word, word)
        return word if word in MOVES else None

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        direction = self._parse(action)
        if direction is None:
            obs = (
                "Invalid move: use \\boxed{north}, \\boxed{south}, \\boxed{east} or \\boxed{west}. "
            )
        elif direction not in self.open[self.pos]:
            obs = f"You bump into a wall to the {direction}. "
        else:
            self.pos = _move(self.pos, direction)
            if self.pos == self.exit:
                return (
                    f"You step through the exit after {self.turns} moves. Free!",
                    1.0,
                    True,
                    False,
                    info,
                )
            obs = f"You go {direction}. "
        # Partial credit: the best share of the maze-path distance to the exit closed so far.
        self.best = max(self.best, 0.9 * (1 - self.to_exit[self.pos] / self.start_dist))
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        out_of_turns = self.turns >= self.max_turns
        obs += self._describe() + (" You are out of moves." if out_of_turns else "")
        return obs, round(self.best, 4), out_of_turns, False, info

    def solution(self):
        actions, cell = [], self.pos
        while cell != self.exit:
            direction = next(
                d
                for d in MOVES
                if d in self.open[cell] and self.to_exit[_move(cell, d)] < self.to_exit[cell]
            )
            actions.append(f"\\boxed{{{direction}}}")
            cell = _move(cell, direction)
        return actions

    def close(self):
        pass


def _move(cell, direction):
    dr, dc = MOVES[direction]
    return cell[0] + dr, cell[1] + dc


def _opposite(direction):
    return {"north": "south", "south": "north", "east": "west", "west": "east"}[direction]
