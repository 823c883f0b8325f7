"""A Hooke's-law lab: hang masses on a spring, read its length, report k and its rest length.

The length obeys L = L0 + m*g/k, but the ruler only reads whole millimetres and no mass
below 10 g may be hung, so L0 must be extrapolated. Teaches experimental design in physics:
measurements far apart keep the rounding error small relative to the slope being measured.
"""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_G = 9.81
_MIN_MASS, _MAX_MASS = 10, 1000  # grams
_K_TOLERANCE = 0.02  # relative
_L0_TOLERANCE = 2.0  # millimetres


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

    def __init__(self, max_turns: int = 6):
        self.max_turns = max_turns
        self._rng = random.Random()

    def reset(self, seed=None):
        self._rng = random.Random(seed)
        self.k = self._rng.randint(100, 600) / 10  # N/m
        self.rest = self._rng.randint(1000, 3000) / 10  # mm
        self.readings = {}
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        obs = (
            "A spring hangs from a stand; its length is L = L0 + m*g/k with g = 9.81 m/s^2. "
            "Find the spring constant k (N/m, within 2%) and the rest length L0 (mm, within "
            "2 mm). Commands: \\boxed{hang M} hangs a mass of M grams (whole number, "
            f"{_MIN_MASS} to {_MAX_MASS}) and reads the length to the nearest millimetre; "
            "\\boxed{answer K L0} submits both values and ends the episode. "
            f"You have {self.max_turns} turns."
        )
        return obs, {"g": _G}

    def _length(self, grams):
        # m*g/k metres with m in kilograms equals grams*g/k millimetres.
        return round(self.rest + _G * grams / self.k)

    def _information(self):
        return min(len(self.readings), 2) / 2

    def _hang(self, grams):
        self.readings[grams] = self._length(grams)
        self.reward = max(self.reward, 0.1 * self._information())
        return f"With {grams} g hanging, the spring is {self.readings[grams]} mm long."

    def _answer(self, k_guess, rest_guess):
        k_ok = abs(k_guess - self.k) <= _K_TOLERANCE * self.k
        rest_ok = abs(rest_guess - self.rest) <= _L0_TOLERANCE
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
        mass_ok = len(args) == 1 and args[0].is_integer() and _MIN_MASS <= args[0] <= _MAX_MASS
        done = False
        if verb == "hang" and mass_ok:
            obs = self._hang(int(args[0]))
        elif verb == "answer" and len(args) == 2:
            obs, done = self._answer(*args), True
        else:
            obs = (
                f"Invalid action. Use \\boxed{{hang M}} with a whole M from {_MIN_MASS} to "
                f"{_MAX_MASS} grams, or \\boxed{{answer K L0}}."
            )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "readings": len(self.readings)}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        light, heavy = self._length(_MIN_MASS), self._length(_MAX_MASS)
        k = _G * (_MAX_MASS - _MIN_MASS) / (heavy - light)  # grams/mm cancel to kg/m
        rest = light - _G * _MIN_MASS / k
        return [
            f"\\boxed{{hang {_MIN_MASS}}}",
            f"\\boxed{{hang {_MAX_MASS}}}",
            f"\\boxed{{answer {k:.2f} {rest:.1f}}}",
        ]

    def close(self):
        pass
