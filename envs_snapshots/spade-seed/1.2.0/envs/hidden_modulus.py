"""Find a hidden modulus m by asking for remainders X mod m, with too few turns to scan or bisect.

Teaches number theory: X minus its remainder is always a multiple of m, gcds of such
multiples shrink towards m, and the remainder of a number just below a known multiple
reveals m directly. Difficulty levels widen the range of m (3-20 at level 0, 100-9999 at the
top) and raise the largest X, so the arithmetic grows from two digits to ten.
"""

import math
import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_LOW, _HIGH = 100, 9999  # range of the hidden modulus
_MAX_X = 10**9

# Difficulty levels: (smallest m, largest m, largest X, turn budget). The top level is the
# original task.
LEVELS = [
    (3, 20, 100, 6),
    (10, 99, 1000, 6),
    (20, 999, 10**5, 6),
    (50, 5000, 10**6, 6),
    (_LOW, _HIGH, _MAX_X, 6),
]


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


class HiddenModulusEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "train",
        "skill": "number theory",
        "difficulty": "medium",
        "hint": "Scanning or bisecting the range needs far more queries than you have. Instead "
        "ask for the remainder of a very large X: X minus that remainder is a multiple of m. "
        "Then either take gcds of several such multiples, or query the number one below a "
        "known multiple, whose remainder is one less than m. Check your candidate against "
        "every reply before answering.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.low, self.high, self.max_x, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.modulus = self._rng.randint(self.low, self.high)
        self.replies = {}
        self.candidates = list(range(self.low, self.high + 1))  # moduli consistent with replies
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        obs = (
            f"A hidden integer m lies between {self.low} and {self.high}. Commands: "
            f"\\boxed{{mod X}} returns X mod m for an integer 0 <= X <= {self.max_x}; "
            "\\boxed{answer M} submits your value of m and ends the episode. You have "
            f"{self.max_turns} turns."
        )
        return obs, {"low": self.low, "high": self.high}

    def _narrowing(self):
        # Share of the candidate range ruled out, on a log scale (1 when m is pinned down).
        return 1 - math.log(len(self.candidates)) / math.log(self.high - self.low + 1)

    def _query(self, x):
        self.replies[x] = x % self.modulus
        self.candidates = [m for m in self.candidates if x % m == self.replies[x]]
        self.reward = max(self.reward, 0.5 * self._narrowing())
        return f"{x} mod m = {self.replies[x]}"

    def _answer(self, guess):
        if guess == self.modulus:
            self.reward = 1.0
            return f"Correct! m = {self.modulus}."
        return f"Wrong: m = {self.modulus}."

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        verb, rest = _command(action)
        value = _int(rest)
        done = False
        if verb == "mod" and value is not None and 0 <= value <= self.max_x:
            obs = self._query(value)
        elif verb == "answer" and value is not None:
            obs, done = self._answer(value), True
        else:
            obs = (
                f"Invalid action. Use \\boxed{{mod X}} with 0 <= X <= {self.max_x}, "
                "or \\boxed{answer M}."
            )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "queries": len(self.replies)}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        multiple = self.max_x - self.max_x % self.modulus
        return [
            f"\\boxed{{mod {self.max_x}}}",
            f"\\boxed{{mod {multiple - 1}}}",
            f"\\boxed{{answer {self.modulus}}}",
        ]

    def close(self):
        pass
