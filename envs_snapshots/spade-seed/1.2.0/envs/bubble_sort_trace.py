"""Trace bubble sort one pass at a time: after each left-to-right pass, report the array.

Teaches algorithm execution: applying the compare-and-swap rule exactly, in order, without
skipping ahead. A wrong report is corrected so the trace can go on, but only a flawless
trace of every pass scores 1. Difficulty levels grow the array (three or four one-digit
values at level 0, six to eight two-digit values at the top) and the number of passes.
"""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")

# Difficulty levels: (array sizes, values drawn from, least passes, turn budget). The top
# level is the original task.
LEVELS = [
    ((3, 4), range(1, 10), 1, 5),
    ((4, 5), range(1, 20), 2, 7),
    ((5, 6), range(10, 100), 2, 8),
    ((5, 7), range(10, 100), 3, 9),
    ((6, 8), range(10, 100), 3, 12),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def _boxed(action):
    """Content of the last \\boxed{...} in the action, or None."""
    found = _BOXED.findall(action) if isinstance(action, str) else []
    return found[-1].strip() if found else None


def _ints(text):
    """Integers separated by spaces or commas (brackets allowed), or None."""
    try:
        return [int(t) for t in text.strip("[]() ").replace(",", " ").split()]
    except ValueError:
        return None


def _bubble_passes(values):
    """The array after each full pass, up to the first pass that leaves it sorted."""
    arr, passes = list(values), []
    while arr != sorted(arr):
        for i in range(len(arr) - 1):
            if arr[i] > arr[i + 1]:
                arr[i], arr[i + 1] = arr[i + 1], arr[i]
        passes.append(list(arr))
    return passes


class BubbleSortTraceEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "train",
        "skill": "algorithm execution",
        "difficulty": "easy",
        "hint": "Start each pass from the array the previous step ended with. Walk left to "
        "right over every adjacent pair, swapping when the left value is larger; a large "
        "value keeps travelling right during the same pass. After pass k the k largest "
        "values sit in their final places at the right end, which is a quick check.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        sizes, values, least_passes, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.passes = []
        while len(self.passes) < least_passes:
            size = self._rng.randint(*sizes)
            self.start = self._rng.sample(values, size)
            self.passes = _bubble_passes(self.start)
        self.current = list(self.start)
        self.done_passes = 0
        self.correct = 0
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        obs = (
            f"Array: {self.current}. Run bubble sort: one pass compares every adjacent pair "
            "from left to right and swaps the pair when the left value is larger. After each "
            "pass, reply with the resulting array, e.g. \\boxed{4, 8, 15, 16}. The episode ends "
            f"when the array is sorted. You have {self.max_turns} turns."
        )
        return obs, {"length": len(self.start)}

    def _report(self, guess):
        expected = self.passes[self.done_passes]
        self.done_passes += 1
        self.current = list(expected)
        if guess == expected:
            self.correct += 1
            verdict = f"Pass {self.done_passes} correct."
        else:
            verdict = f"Pass {self.done_passes} wrong; the array is actually {expected}."
        if self.done_passes == len(self.passes):
            return f"{verdict} The array is now sorted.", True
        return f"{verdict} Report pass {self.done_passes + 1}.", False

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        content = _boxed(action)
        guess = _ints(content) if content is not None else None
        if guess is None or sorted(guess) != sorted(self.current):
            obs, done = (
                f"Invalid action: box a rearrangement of the current array {self.current}.",
                False,
            )
        else:
            obs, done = self._report(guess)
        self.reward = self.correct / len(self.passes)
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "pass": self.done_passes, "correct": self.correct}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        return ["\\boxed{" + ", ".join(map(str, arr)) + "}" for arr in self.passes]

    def close(self):
        pass
