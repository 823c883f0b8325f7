"""Probe a hidden quadratic f(x) = a*x^2 + b*x + c at points you choose, then name a, b and c.

Teaches function induction: three evaluations determine a quadratic, and the finite
differences of values at consecutive integers give its coefficients without solving a
general linear system. Difficulty levels go from a linear function with small coefficients
(two probes) at level 0 to the quadratic with coefficients in [-9, 9] at the top.
"""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_X_LIMIT = 20
_COEFF_LIMIT = 9

# Difficulty levels: (degree, coefficient limit, turn budget). The top level is the original
# task.
LEVELS = [(1, 3, 5), (1, 9, 5), (2, 3, 6), (2, 6, 7), (2, _COEFF_LIMIT, 8)]
_NAMES = {1: ("linear function", "a*x + b"), 2: ("quadratic", "a*x^2 + b*x + c")}


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


def _ints(text):
    """Integers separated by spaces or commas, or None if any token is not an integer."""
    try:
        return [int(token) for token in text.replace(",", " ").split()]
    except ValueError:
        return None


class HiddenPolynomialEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "heldout",
        "skill": "function induction",
        "difficulty": "easy",
        "hint": "Evaluate f at three consecutive integers centred on zero. The value at zero is "
        "the constant term; half of (f(1) + f(-1)) minus f(0) is the leading coefficient; half "
        "of (f(1) - f(-1)) is the linear coefficient. Check the formula against every value "
        "you saw before submitting, since the answer ends the episode.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.degree, limit, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        nonzero = [v for v in range(-limit, limit + 1) if v]
        self.coeffs = [self._rng.choice(nonzero)] + [
            self._rng.randint(-limit, limit) for _ in range(self.degree)
        ]
        self.seen = {}
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        kind, form = _NAMES[self.degree]
        letters = " ".join("ABC"[: self.degree + 1])
        obs = (
            f"A hidden {kind} f(x) = {form} has integer coefficients in "
            f"[-{limit}, {limit}] and a != 0. Commands: \\boxed{{eval X}} returns "
            f"f(X) for an integer X in [-{_X_LIMIT}, {_X_LIMIT}]; \\boxed{{answer {letters}}} "
            f"submits the coefficients and ends the episode. You have {self.max_turns} turns."
        )
        return obs, {"max_turns": self.max_turns}

    def _f(self, x):
        value = 0
        for coeff in self.coeffs:  # Horner's rule, leading coefficient first
            value = value * x + coeff
        return value

    def _information(self):
        # Share of the degree + 1 evaluations needed to pin the polynomial down.
        return min(len(self.seen), self.degree + 1) / (self.degree + 1)

    def _evaluate(self, x):
        self.seen[x] = self._f(x)
        self.reward = max(self.reward, 0.3 * self._information())
        return f"f({x}) = {self.seen[x]}"

    def _answer(self, guess):
        n = len(self.coeffs)
        correct = sum(g == c for g, c in zip(guess, self.coeffs, strict=True))
        if correct == n:
            self.reward = 1.0
            return "Correct! You identified f exactly."
        self.reward = 0.3 * self._information() + 0.6 * correct / n
        powers = ["x^2", "x", ""][-n:]
        shown = " + ".join(f"{c}{p}" for c, p in zip(self.coeffs, powers, strict=True))
        return f"Wrong: {correct} of {n} coefficients right. f(x) = {shown}."

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        verb, rest = _command(action)
        args = _ints(rest)
        done = False
        if verb == "eval" and args and len(args) == 1 and abs(args[0]) <= _X_LIMIT:
            obs = self._evaluate(args[0])
        elif verb == "answer" and args and len(args) == len(self.coeffs):
            obs, done = self._answer(args), True
        else:
            letters = " ".join("ABC"[: len(self.coeffs)])
            obs = (
                f"Invalid action. Use \\boxed{{eval X}} with an integer |X| <= {_X_LIMIT}, "
                f"or \\boxed{{answer {letters}}}."
            )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "points_seen": len(self.seen)}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        probes = [f"\\boxed{{eval {x}}}" for x in (-1, 0, 1)[2 - self.degree :]]
        return probes + ["\\boxed{answer " + " ".join(map(str, self.coeffs)) + "}"]

    def close(self):
        pass
