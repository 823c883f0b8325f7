"""Write a fraction as a sum of distinct unit fractions, one unit fraction per turn.

Exact arithmetic with `fractions.Fraction`; the reward is the share of the target covered so
far. Overshooting the target ends the episode.
"""

import random
import re
from fractions import Fraction

# Proper fractions p/q with q up to 12 that are not unit fractions already.
TARGETS = sorted(
    {Fraction(p, q) for q in range(3, 13) for p in range(2, q)}
    - {Fraction(1, q) for q in range(2, 13)}
)
UNIT = re.compile(r"\\boxed\{\s*1\s*/\s*(\d+)\s*\}")


class EgyptianFractionsEnv:
    metadata = {
        "kind": "math",
        "skill": "number theory",
        "difficulty": "medium",
        "hint": "Take the largest unit fraction that still fits (Fibonacci's greedy rule).",
    }
    max_turns = 10

    def reset(self, seed=None):
        self.target = random.Random(seed).choice(TARGETS)
        self.used = []
        self.turns = 0
        return (
            f"Write {self.target} as a sum of distinct unit fractions. Add one per turn as "
            "\\boxed{1/n}."
        ), {"target": str(self.target)}

    def _covered(self):
        return sum((Fraction(1, n) for n in self.used), Fraction(0))

    def _progress(self):
        return float(self._covered() / self.target) * 0.9

    def step(self, action):
        self.turns += 1
        match = UNIT.search(action)
        out = self.turns >= self.max_turns
        if match is None or int(match.group(1)) == 0:
            return "Give a unit fraction, \\boxed{1/n}.", self._progress(), out, False, {}
        n = int(match.group(1))
        if n in self.used:
            return f"1/{n} is already used.", self._progress(), out, False, {}
        self.used.append(n)
        covered = self._covered()
        if covered > self.target:
            self.used.pop()
            return f"Overshoot: {covered} > {self.target}.", self._progress(), True, False, {}
        if covered == self.target:
            terms = " + ".join(f"1/{k}" for k in self.used)
            return f"{terms} = {self.target}.", 1.0, True, False, {}
        return f"So far {covered}; {self.target - covered} to go.", self._progress(), out, False, {}

    def solution(self):
        rest, terms = self.target, []
        while rest > 0:
            n = -(-rest.denominator // rest.numerator)  # ceil(1 / rest)
            terms.append(n)
            rest -= Fraction(1, n)
        return [f"\\boxed{{1/{n}}}" for n in terms]

    def close(self):
        pass
