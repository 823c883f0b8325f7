"""Balance a chemical equation by proposing coefficients and reading per-element imbalances.

Each proposal is answered with the atom count of every element on both sides, so the agent
can balance one element at a time (the single-source elements first, oxygen or hydrogen
last) and correct itself from the feedback. Teaches stoichiometry: conservation of atoms.
Difficulty levels grow the fuels and the pool of classic reactions (more species, larger
coefficients) while the turn budget grows more slowly; level 0 balances three-species
syntheses and small hydrocarbons.
"""

import random
import re
from fractions import Fraction
from math import gcd, lcm

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_ELEMENT = re.compile(r"([A-Z][a-z]?|\(|\))(\d*)")
_MAX_COEFF = 99

# (reactants, products, smallest balancing coefficients in the same order)
_CLASSIC = [
    (["Fe2O3", "CO"], ["Fe", "CO2"], [1, 3, 2, 3]),
    (["Al", "HCl"], ["AlCl3", "H2"], [2, 6, 2, 3]),
    (["KMnO4", "HCl"], ["KCl", "MnCl2", "H2O", "Cl2"], [2, 16, 2, 2, 8, 5]),
    (["Cu", "HNO3"], ["Cu(NO3)2", "NO", "H2O"], [3, 8, 3, 2, 4]),
    (["Ca3(PO4)2", "SiO2", "C"], ["CaSiO3", "P4", "CO"], [2, 6, 10, 6, 1, 10]),
    (["NH3", "O2"], ["NO", "H2O"], [4, 5, 4, 6]),
    (["FeS2", "O2"], ["Fe2O3", "SO2"], [4, 11, 2, 8]),
    (["Ca(OH)2", "H3PO4"], ["Ca3(PO4)2", "H2O"], [3, 2, 1, 6]),
    (["K2Cr2O7", "HCl"], ["KCl", "CrCl3", "Cl2", "H2O"], [1, 14, 2, 2, 3, 7]),
    (["Fe", "H2O"], ["Fe3O4", "H2"], [3, 4, 1, 4]),
    (["Al2(SO4)3", "NaOH"], ["Al(OH)3", "Na2SO4"], [1, 6, 2, 3]),
    (["Mg3N2", "H2O"], ["Mg(OH)2", "NH3"], [1, 6, 3, 2]),
    (["MnO2", "HCl"], ["MnCl2", "Cl2", "H2O"], [1, 4, 1, 1, 2]),
    (["Zn", "HNO3"], ["Zn(NO3)2", "NH4NO3", "H2O"], [4, 10, 4, 1, 3]),
    (["PbS", "O2"], ["PbO", "SO2"], [2, 3, 2, 2]),
    (["C3H5(NO3)3"], ["CO2", "H2O", "N2", "O2"], [4, 12, 10, 6, 1]),
    (["As2S3", "HNO3", "H2O"], ["H3AsO4", "H2SO4", "NO"], [3, 28, 4, 6, 9, 28]),
    (["Cu2S", "O2"], ["Cu2O", "SO2"], [2, 3, 2, 2]),
    (["NaOH", "Cl2"], ["NaCl", "NaClO3", "H2O"], [6, 3, 5, 1, 3]),
    (["Fe3O4", "Al"], ["Al2O3", "Fe"], [3, 8, 4, 9]),
]

# Three-species syntheses for the easiest level.
_SIMPLE = [
    (["H2", "O2"], ["H2O"], [2, 1, 2]),
    (["N2", "H2"], ["NH3"], [1, 3, 2]),
    (["Na", "Cl2"], ["NaCl"], [2, 1, 2]),
    (["Mg", "O2"], ["MgO"], [2, 1, 2]),
    (["H2", "Cl2"], ["HCl"], [1, 1, 2]),
    (["Al", "O2"], ["Al2O3"], [4, 3, 2]),
    (["Fe", "Cl2"], ["FeCl3"], [2, 3, 2]),
    (["CO", "O2"], ["CO2"], [2, 1, 2]),
]


def _classic(max_species, max_coeff):
    """The classic reactions with at most max_species species and coefficients <= max_coeff."""
    return [r for r in _CLASSIC if len(r[2]) <= max_species and max(r[2]) <= max_coeff]


# Difficulty levels: (largest fuel carbon count, most fuel oxygens, classic reaction pool,
# turn budget). The top level is the original task.
LEVELS = [
    (3, 0, _SIMPLE, 4),
    (4, 1, _classic(4, 4), 5),
    (6, 1, _classic(5, 6), 6),
    (7, 2, _classic(5, 12), 7),
    (8, 2, _CLASSIC, 8),
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


def _atoms(formula):
    """Element counts of a formula such as 'Ca3(PO4)2'."""
    stack = [{}]
    for symbol, count in _ELEMENT.findall(formula):
        n = int(count or 1)
        if symbol == "(":
            stack.append({})
        elif symbol == ")":
            group = stack.pop()
            for element, k in group.items():
                stack[-1][element] = stack[-1].get(element, 0) + k * n
        else:
            stack[-1][symbol] = stack[-1].get(symbol, 0) + n
    return stack[0]


def _combustion(rng, max_x=8, max_z=2):
    """A random organic compound CxHyOz burning in oxygen, with its smallest coefficients."""
    x = rng.randint(2, max_x)
    y = 2 * rng.randint((x + 1) // 2, x + 1)
    z = rng.randint(0, min(max_z, x))
    fuel = f"C{x}H{y}" + {0: "", 1: "O", 2: "O2"}[z]
    # One fuel molecule: x CO2, y/2 H2O, and (2x + y/2 - z)/2 O2.
    ratio = [Fraction(1), Fraction(4 * x + y - 2 * z, 4), Fraction(x), Fraction(y, 2)]
    scale = lcm(*(r.denominator for r in ratio))
    coeffs = [int(r * scale) for r in ratio]
    divisor = gcd(*coeffs)
    return [fuel, "O2"], ["CO2", "H2O"], [c // divisor for c in coeffs]


class BalanceReactionEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "heldout",
        "skill": "stoichiometry",
        "difficulty": "medium",
        "hint": "Balance elements that appear in only one species per side first, and leave "
        "the elements that appear in many species (often oxygen and hydrogen) for last. Use "
        "the per-element counts after each proposal to see which coefficient to change; if a "
        "fraction appears, multiply every coefficient by its denominator.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][3]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        max_x, max_z, pool, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        if self._rng.random() < 0.5:
            reactants, products, coeffs = _combustion(self._rng, max_x, max_z)
        else:
            reactants, products, coeffs = self._shuffled(*self._rng.choice(pool))
        self.species = reactants + products
        self.n_reactants = len(reactants)
        self.answer = coeffs
        self.elements = sorted(set().union(*(_atoms(s) for s in self.species)))
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        equation = " + ".join(reactants) + " -> " + " + ".join(products)
        example = " ".join(["1"] * len(self.species))
        obs = (
            f"Balance: {equation}. Propose positive whole coefficients for the "
            f"{len(self.species)} species in the order shown, e.g. \\boxed{{{example}}}. "
            "Each proposal is answered with every element's atom count on both sides; the "
            f"episode ends when all elements balance. You have {self.max_turns} turns."
        )
        return obs, {"species": list(self.species)}

    def _shuffled(self, reactants, products, coeffs):
        """Shuffle the species within each side, keeping coefficients aligned."""
        left = list(zip(reactants, coeffs[: len(reactants)], strict=True))
        right = list(zip(products, coeffs[len(reactants) :], strict=True))
        self._rng.shuffle(left)
        self._rng.shuffle(right)
        return [s for s, _ in left], [s for s, _ in right], [c for _, c in left + right]

    def _side_counts(self, coeffs, species):
        totals = {}
        for c, formula in zip(coeffs, species, strict=True):
            for element, k in _atoms(formula).items():
                totals[element] = totals.get(element, 0) + c * k
        return totals

    def _propose(self, coeffs):
        left = self._side_counts(coeffs[: self.n_reactants], self.species[: self.n_reactants])
        right = self._side_counts(coeffs[self.n_reactants :], self.species[self.n_reactants :])
        balanced = [e for e in self.elements if left.get(e, 0) == right.get(e, 0)]
        if len(balanced) == len(self.elements):
            self.reward = 1.0
            return "Balanced! Every element has the same atom count on both sides.", True
        self.reward = max(self.reward, 0.8 * len(balanced) / len(self.elements))
        report = "; ".join(
            f"{e}: left {left.get(e, 0)}, right {right.get(e, 0)}"
            + (" ok" if e in balanced else "")
            for e in self.elements
        )
        return f"Not balanced. {report}.", False

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        content = _boxed(action)
        tokens = content.replace(",", " ").split() if content is not None else []
        done = False
        if len(tokens) == len(self.species) and all(
            t.isascii() and t.isdigit() and 1 <= int(t) <= _MAX_COEFF for t in tokens
        ):
            obs, done = self._propose([int(t) for t in tokens])
        else:
            obs = (
                f"Invalid action: box {len(self.species)} whole coefficients from 1 to "
                f"{_MAX_COEFF}, separated by spaces."
            )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        ones = "\\boxed{" + " ".join(["1"] * len(self.species)) + "}"
        return [ones, "\\boxed{" + " ".join(map(str, self.answer)) + "}"]

    def close(self):
        pass
