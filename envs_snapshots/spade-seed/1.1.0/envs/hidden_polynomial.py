"""Probe a hidden quadratic f(x) = a*x^2 + b*x + c at points you choose, then name a, b and c.

Teaches function induction: three evaluations determine a quadratic, and the finite
differences of values at consecutive integers give its coefficients without solving a
general linear system.
"""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_X_LIMIT = 20
_COEFF_LIMIT = 9


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

    def __init__(self, max_turns: int = 8):
        self.max_turns = max_turns
        self._rng = random.Random()

    def reset(self, seed=None):
        self._rng = random.Random(seed)
        nonzero = [v for v in range(-_COEFF_LIMIT, _COEFF_LIMIT + 1) if v]
        self.coeffs = [
            self._rng.choice(nonzero),
            self._rng.randint(-_COEFF_LIMIT, _COEFF_LIMIT),
            self._rng.randint(-_COEFF_LIMIT, _COEFF_LIMIT),
        ]
        self.seen = {}
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        obs = (
            "A hidden quadratic f(x) = a*x^2 + b*x + c has integer coefficients in "
            f"[-{_COEFF_LIMIT}, {_COEFF_LIMIT}] and a != 0. Commands: \\boxed{{eval X}} returns "
            f"f(X) for an integer X in [-{_X_LIMIT}, {_X_LIMIT}]; \\boxed{{answer A B C}} "
            f"submits the coefficients and ends the episode. You have {self.max_turns} turns."
        )
        return obs, {"max_turns": self.max_turns}

    def _f(self, x):
        a, b, c = self.coeffs
        return a * x * x + b * x + c

    def _information(self):
        # Share of the three evaluations needed to pin the quadratic down.
        return min(len(self.seen), 3) / 3

    def _evaluate(self, x):
        self.seen[x] = self._f(x)
        self.reward = max(self.reward, 0.3 * self._information())
        return f"f({x}) = {self.seen[x]}"

    def _answer(self, guess):
        correct = sum(g == c for g, c in zip(guess, self.coeffs, strict=True))
        if correct == 3:
            self.reward = 1.0
            return "Correct! You identified f exactly."
        self.reward = 0.3 * self._information() + 0.6 * correct / 3
        a, b, c = self.coeffs
        return f"Wrong: {correct} of 3 coefficients right. f(x) = {a}x^2 + {b}x + {c}."

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        verb, rest = _command(action)
        args = _ints(rest)
        done = False
        if verb == "eval" and args and len(args) == 1 and abs(args[0]) <= _X_LIMIT:
            obs = self._evaluate(args[0])
        elif verb == "answer" and args and len(args) == 3:
            obs, done = self._answer(args), True
        else:
            obs = (
                f"Invalid action. Use \\boxed{{eval X}} with an integer |X| <= {_X_LIMIT}, "
                "or \\boxed{answer A B C}."
            )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "points_seen": len(self.seen)}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        a, b, c = self.coeffs
        probes = [f"\\boxed{{eval {x}}}" for x in (-1, 0, 1)]
        return probes + [f"\\boxed{{answer {a} {b} {c}}}"]

    def close(self):
        pass
