"""The 8-puzzle: slide tiles on a 3x3 board back into order (search and planning).

Difficulty levels scramble the board further from the goal."""

import heapq
import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
GOAL = (1, 2, 3, 4, 5, 6, 7, 8, 0)
MOVES = {"up": -3, "down": 3, "left": -1, "right": 1}
REVERSE = {"up": "down", "down": "up", "left": "right", "right": "left"}

# Difficulty levels: (scramble length range, least Manhattan distance, move budget). The top
# level is the original task.
LEVELS = [((3, 3), 2, 6), ((4, 6), 4, 12), ((6, 10), 5, 24), ((10, 18), 6, 40), ((14, 26), 8, 60)]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def blank_moves(state):
    """Directions the blank can move in, with the resulting states."""
    i = state.index(0)
    for name, delta in MOVES.items():
        j = i + delta
        if name in ("left", "right") and j // 3 != i // 3:
            continue
        if 0 <= j < 9:
            board = list(state)
            board[i], board[j] = board[j], board[i]
            yield name, tuple(board)


def manhattan(state) -> int:
    return sum(
        abs(i // 3 - (t - 1) // 3) + abs(i % 3 - (t - 1) % 3) for i, t in enumerate(state) if t
    )


class SlidingPuzzleEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "heldout",
        "skill": "planning",
        "difficulty": "medium",
        "hint": "Solve in layers: first place tiles 1, 2 and 3 in the top row, then put 4 and 7 "
        "in the left column together, and finally rotate the remaining 2x2 block until 5, 6 "
        "and 8 fall into place. Move the blank around a tile rather than through finished "
        "tiles, and never undo your previous move.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][2]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        steps, self.min_distance, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.state = self._scramble(self._rng.randint(*steps))
        # Tiles home at the start earn nothing below the top level: a short scramble leaves
        # most of them home, which would pay idle play. The top level keeps the 1.1.0 credit.
        self.free_tiles = 0 if self.level == len(LEVELS) - 1 else self._home()
        self.turns = 0
        obs = (
            "Sliding puzzle. Arrange the tiles as\n1 2 3\n4 5 6\n7 8 _\nwhere _ is the blank. "
            "Each turn move the blank one step with \\boxed{up}, \\boxed{down}, \\boxed{left} "
            "or \\boxed{right}; it swaps places with the tile there. You have "
            f"{self.max_turns} moves.\nCurrent board:\n" + self._render()
        )
        return obs, {"board": list(self.state)}

    def _scramble(self, steps):
        """Random walk of the blank from the goal, never undoing the previous step."""
        state, last = GOAL, None
        while True:
            for _ in range(steps):
                options = [(n, s) for n, s in blank_moves(state) if n != REVERSE.get(last)]
                last, state = self._rng.choice(options)
            if manhattan(state) >= self.min_distance:
                return state

    def _render(self) -> str:
        cells = [str(t) if t else "_" for t in self.state]
        return "\n".join(" ".join(cells[r * 3 : r * 3 + 3]) for r in range(3))

    def _home(self) -> int:
        return sum(t == g for t, g in zip(self.state, GOAL) if g)

    def _progress(self) -> float:
        # Partial credit: the share of tiles currently in their home square (beyond the free ones).
        return round(0.9 * max(0, self._home() - self.free_tiles) / (8 - self.free_tiles), 4)

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        found = _BOXED.findall(action)
        direction = found[-1].strip().lower() if found else ""
        options = dict(blank_moves(self.state))
        if direction not in MOVES:
            obs = "Invalid move: use \\boxed{up}, \\boxed{down}, \\boxed{left} or \\boxed{right}."
        elif direction not in options:
            obs = f"The blank cannot move {direction} from there."
        else:
            self.state = options[direction]
            if self.state == GOAL:
                return "Solved!\n" + self._render(), 1.0, True, False, info
            obs = f"Moved {direction}."
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        out_of_turns = self.turns >= self.max_turns
        obs += "\n" + self._render() + ("\nOut of moves." if out_of_turns else "")
        return obs, self._progress(), out_of_turns, False, info

    def solution(self):
        """A* search with the Manhattan-distance heuristic: a shortest solution."""
        frontier = [(manhattan(self.state), 0, self.state, [])]
        seen = {self.state: 0}
        while frontier:
            _, cost, state, path = heapq.heappop(frontier)
            if state == GOAL:
                return [f"\\boxed{{{d}}}" for d in path]
            for name, nxt in blank_moves(state):
                if seen.get(nxt, cost + 2) > cost + 1:
                    seen[nxt] = cost + 1
                    heapq.heappush(
                        frontier, (cost + 1 + manhattan(nxt), cost + 1, nxt, path + [name])
                    )
        return []

    def close(self):
        pass
