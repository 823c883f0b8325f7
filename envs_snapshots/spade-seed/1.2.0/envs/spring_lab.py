"""A Hooke's-law lab: hang masses on a spring, read its length, report k and its rest length.

The length obeys L = L0 + m*g/k, but the ruler only reads whole millimetres and no mass
below 10 g may be hung, so L0 must be extrapolated. Teaches experimental design in physics:
measurements far apart keep the rounding error small relative to the slope being measured.
Difficulty levels: below level 2 an empty hook (0 g) reads L0 directly, level 0 uses g = 10
and whole-number k and L0, and the tolerances tighten towards the top.
"""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_G = 9.81
_MIN_MASS, _MAX_MASS = 10, 1000  # grams
_K_TOLERANCE = 0.02  # relative
_L0_TOLERANCE = 2.0  # millimetres

# Difficulty levels: (lightest mass allowed, g, whole-number k and L0, relative k tolerance,
# L0 tolerance in mm, turn budget). The top level is the original task.
LEVELS = [
    (0, 10, True, 0.05, 3.0, 5),
    (0, _G, False, 0.05, 2.0, 5),
    (_MIN_MASS, _G, False, 0.05, 3.0, 6),
    (_MIN_MASS, _G, False, 0.03, 2.0, 6),
    (_MIN_MASS, _G, False, _K_TOLERANCE, _L0_TOLERANCE, 6),
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


def _numbers(text):
    """Numbers separated by spaces or commas, or None if any token is not a number."""
    try:
        values = [float(token) for token in text.replace(",", " ").split()]
    except ValueError:
        return None
    return values if all(v == v and abs(v) != float("inf") for v in values) else None


class SpringLabEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "heldout",
        "skill": "physics experiment",
        "difficulty": "medium",
        "hint": "Length is linear in mass: the slope is g/k and the intercept is the rest "
        "length. Because readings are rounded to the millimetre, measure at the lightest and "
        "heaviest allowed masses so the rounding error is tiny next to the length difference. "
        "Convert grams to kilograms and millimetres to metres before computing k in N/m, then "
        "extrapolate the line back to zero mass for the rest length.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.min_mass, self.g, whole, self.k_tol, self.rest_tol, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.k = self._rng.randint(100, 600) / 10  # N/m
        self.rest = self._rng.randint(1000, 3000) / 10  # mm
        if whole:
            self.k, self.rest = round(self.k), round(self.rest)
        self.readings = {}
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        obs = (
            f"A spring hangs from a stand; its length is L = L0 + m*g/k with g = {self.g:g} "
            f"m/s^2. Find the spring constant k (N/m, within {self.k_tol:.0%}) and the rest "
            f"length L0 (mm, within {self.rest_tol:g} mm). Commands: \\boxed{{hang M}} hangs a "
            f"mass of M grams (whole number, {self.min_mass} to {_MAX_MASS}) and reads the "
            "length to the nearest millimetre; \\boxed{answer K L0} submits both values and "
            f"ends the episode. You have {self.max_turns} turns."
        )
        return obs, {"g": self.g}

    def _length(self, grams):
        # m*g/k metres with m in kilograms equals grams*g/k millimetres.
        return round(self.rest + self.g * grams / self.k)

    def _information(self):
        return min(len(self.readings), 2) / 2

    def _hang(self, grams):
        self.readings[grams] = self._length(grams)
        self.reward = max(self.reward, 0.1 * self._information())
        return f"With {grams} g hanging, the spring is {self.readings[grams]} mm long."

    def _answer(self, k_guess, rest_guess):
        k_ok = abs(k_guess - self.k) <= self.k_tol * self.k
        rest_ok = abs(rest_guess - self.rest) <= self.rest_tol
        truth = f"k = {self.k} N/m, L0 = {self.rest} mm"
        if k_ok and rest_ok:
            self.reward = 1.0
            return f"Both within tolerance ({truth})."
        self.reward = 0.1 * self._information() + 0.4 * (k_ok + rest_ok)
        return f"k {'ok' if k_ok else 'off'}, L0 {'ok' if rest_ok else 'off'} ({truth})."

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        verb, rest = _command(action)
        args = _numbers(rest) or []
        mass_ok = len(args) == 1 and args[0].is_integer() and self.min_mass <= args[0] <= _MAX_MASS
        done = False
        if verb == "hang" and mass_ok:
            obs = self._hang(int(args[0]))
        elif verb == "answer" and len(args) == 2:
            obs, done = self._answer(*args), True
        else:
            obs = (
                f"Invalid action. Use \\boxed{{hang M}} with a whole M from {self.min_mass} to "
                f"{_MAX_MASS} grams, or \\boxed{{answer K L0}}."
            )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "readings": len(self.readings)}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        light, heavy = self._length(self.min_mass), self._length(_MAX_MASS)
        k = self.g * (_MAX_MASS - self.min_mass) / (heavy - light)  # grams/mm cancel to kg/m
        rest = light - self.g * self.min_mass / k
        return [
            f"\\boxed{{hang {self.min_mass}}}",
            f"\\boxed{{hang {_MAX_MASS}}}",
            f"\\boxed{{answer {k:.2f} {rest:.1f}}}",
        ]

    def close(self):
        pass
