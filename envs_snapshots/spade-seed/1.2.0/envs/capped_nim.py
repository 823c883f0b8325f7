"""Nim with a take-limit against a perfect opponent: win from a winning start by keeping
the opponent in losing positions (combinatorial game theory, Sprague-Grundy values).

Difficulty levels add heaps, make them bigger and widen the take-limit."""

import copy
import random
import re
from functools import reduce

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_TAKE = re.compile(r"^take\s+(\d+)\s+from\s+(?:heap\s+)?(\d+)$")

# Difficulty levels: (take-limit range, heap size range, heap counts, turn budget). The top
# level is the original task; level 0 is two small heaps.
LEVELS = [
    ((2, 2), (1, 4), [2], 6),
    ((2, 3), (2, 6), [2], 8),
    ((2, 3), (3, 8), [3], 12),
    ((2, 4), (3, 10), [3], 18),
    ((2, 4), (3, 11), [3, 4], 30),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


class CappedNimEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "train",
        "skill": "game theory",
        "difficulty": "medium",
        "hint": "With a cap of K per move, a heap of n objects behaves like a Nim heap of size "
        "n mod (K+1). XOR those values over all heaps: you are winning exactly when the XOR is "
        "non-zero, and you should always move to a position whose XOR is zero. Find a heap "
        "whose value v satisfies v XOR total < v and remove enough objects to bring its value "
        "down to v XOR total.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][3]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        caps, sizes, counts, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.cap = self._rng.randint(*caps)
        while True:
            self.heaps = [self._rng.randint(*sizes) for _ in range(self._rng.choice(counts))]
            if self._nim_sum(self.heaps):
                break
        self.total = sum(self.heaps)
        self.safe_removed = 0
        self.blundered = False
        self.winner = None
        self.turns = 0
        obs = (
            f"Nim with a limit. Heaps: {self._show()}. Players alternate; on your turn take "
            f"between 1 and {self.cap} objects from a single heap. Whoever takes the last "
            "object wins. Your opponent plays perfectly, but you move first from a winnable "
            "position. Move with \\boxed{take N from H} (heaps numbered from 1)."
        )
        return obs, {"heaps": list(self.heaps), "cap": self.cap}

    def _show(self) -> str:
        return ", ".join(f"heap {i + 1}: {n}" for i, n in enumerate(self.heaps))

    def _nim_sum(self, heaps) -> int:
        return reduce(lambda acc, n: acc ^ (n % (self.cap + 1)), heaps, 0)

    def _legal_moves(self):
        return [(h, k) for h, n in enumerate(self.heaps) for k in range(1, min(n, self.cap) + 1)]

    def _after(self, move):
        heaps = list(self.heaps)
        heaps[move[0]] -= move[1]
        return heaps

    def _winning_moves(self):
        return [m for m in self._legal_moves() if self._nim_sum(self._after(m)) == 0]

    def _parse(self, action: str):
        found = _BOXED.findall(action)
        match = _TAKE.match(found[-1].strip().lower()) if found else None
        if not match:
            return None
        move = (int(match.group(2)) - 1, int(match.group(1)))
        return move if move in self._legal_moves() else None

    def _progress(self) -> float:
        # Partial credit: objects cleared while you still held a won position.
        return round(0.9 * self.safe_removed / self.total, 4)

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        move = self._parse(action)
        if move is None:
            obs = f"Illegal move. Heaps: {self._show()}. Use \\boxed{{take N from H}} with 1 <= N <= {self.cap} and N no larger than the heap."
        else:
            obs = self._play_round(move)
            if not any(self.heaps):
                return obs, 1.0 if self.winner == "you" else self._progress(), True, False, info
        truncated = self.turns >= self.max_turns
        return (
            obs + (" Out of turns." if truncated else ""),
            self._progress(),
            False,
            truncated,
            info,
        )

    def _play_round(self, move) -> str:
        self.heaps = self._after(move)
        if self._nim_sum(self.heaps) != 0:
            self.blundered = True
        if not self.blundered:
            self.safe_removed += move[1]
        text = f"You take {move[1]} from heap {move[0] + 1}."
        if not any(self.heaps):
            self.winner = "you"
            return text + " You took the last object. You win!"
        reply = self._rng.choice(self._winning_moves() or self._legal_moves())
        self.heaps = self._after(reply)
        if not self.blundered:
            self.safe_removed += reply[1]
        text += f" Opponent takes {reply[1]} from heap {reply[0] + 1}."
        if not any(self.heaps):
            self.winner = "opponent"
            return text + " The opponent took the last object. You lose."
        return text + f" Heaps: {self._show()}."

    def solution(self):
        sim, actions = copy.deepcopy(self), []
        while True:
            heap, count = sim._winning_moves()[0]
            actions.append(f"\\boxed{{take {count} from {heap + 1}}}")
            sim.step(actions[-1])
            if not any(sim.heaps):
                return actions

    def close(self):
        pass
