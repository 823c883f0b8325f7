"""Find the index of a target value in a hidden sorted array by reading one cell per turn.

Teaches search under a budget: the array is too long to scan, so each read must cut the
range of possible positions in half (binary search on indices, not on values). Difficulty
levels grow the array (4-7 cells at level 0, 200-500 at the top) faster than the budget.
"""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")

# Difficulty levels: (array sizes, turn budget). The top level is the original task.
LEVELS = [((4, 7), 5), ((10, 20), 6), ((30, 60), 8), ((80, 150), 9), ((200, 500), 11)]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def _command(action):
    """Split the last \\boxed{...} of the action into (verb, argument text)."""
    found = _BOXED.findall(action) if isinstance(action, str) else []
    parts = found[-1].strip().split(maxsplit=1) if found else []
    if not parts:
        return "", ""
    return parts[0].lower(), parts[1] if len(parts) > 1 else ""


def _int(text):
    """The text as an integer, or None."""
    try:
        return int(text.strip())
    except ValueError:
        return None


class SortedArraySearchEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "train",
        "skill": "search",
        "difficulty": "easy",
        "hint": "Track the lowest and highest index that could still hold the target. Read the "
        "middle index of that range: a smaller value moves the low end past it, a larger value "
        "moves the high end below it. Stop reading and answer as soon as a read shows the "
        "target; never spend reads outside the live range.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        sizes, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        size = self._rng.randint(*sizes)
        self.values = sorted(self._rng.sample(range(1, 10 * size), size))
        self.target_index = self._rng.randrange(size)
        self.target = self.values[self.target_index]
        self.lo, self.hi = 0, size - 1
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        obs = (
            f"A hidden array holds {size} distinct integers in increasing order, at indices 0 "
            f"to {size - 1}. Find the index of the value {self.target}, which is in the array. "
            "Commands: \\boxed{get I} shows the value at index I; \\boxed{answer I} submits "
            f"the index and ends the episode. You have {self.max_turns} turns in total."
        )
        return obs, {"size": size, "target": self.target}

    def _narrowing(self):
        # Share of the index range ruled out by the reads so far.
        return 1 - (self.hi - self.lo) / (len(self.values) - 1)

    def _read(self, index):
        value = self.values[index]
        if value == self.target:
            self.lo = self.hi = index
        elif value < self.target:
            self.lo = max(self.lo, index + 1)
        else:
            self.hi = min(self.hi, index - 1)
        self.reward = max(self.reward, 0.8 * self._narrowing())
        return f"Index {index} holds {value}."

    def _answer(self, index):
        if index == self.target_index:
            self.reward = 1.0
            return f"Correct! {self.target} is at index {index}."
        return f"Wrong: {self.target} is at index {self.target_index}."

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        verb, rest = _command(action)
        index = _int(rest)
        valid = index is not None and 0 <= index < len(self.values)
        done = False
        if verb == "get" and valid:
            obs = self._read(index)
        elif verb == "answer" and valid:
            obs, done = self._answer(index), True
        else:
            obs = (
                f"Invalid action. Use \\boxed{{get I}} or \\boxed{{answer I}} with 0 <= I <= "
                f"{len(self.values) - 1}."
            )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "lo": self.lo, "hi": self.hi}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        lo, hi, actions = 0, len(self.values) - 1, []
        while True:
            mid = (lo + hi) // 2
            actions.append(f"\\boxed{{get {mid}}}")
            if self.values[mid] == self.target:
                return actions + [f"\\boxed{{answer {mid}}}"]
            lo, hi = (mid + 1, hi) if self.values[mid] < self.target else (lo, mid - 1)

    def close(self):
        pass
