"""Find the one heavy coin among nine with a balance scale.

Rewards are plain ints (0 until solved, 1 when solved) and `info` carries tuples, sets and a
dataclass: the contract's numbers and dicts, not only floats and JSON-shaped values.
"""

import dataclasses
import random
import re


@dataclasses.dataclass
class Weighing:
    left: tuple
    right: tuple
    result: str


class CoinScaleEnv:
    metadata = {
        "kind": "puzzle",
        "skill": "deduction",
        "difficulty": "easy",
        "hint": "Split the coins into three groups of three.",
    }
    max_turns = 6

    def reset(self, seed=None):
        self.heavy = random.Random(seed).randint(1, 9)
        self.history = []
        self.turns = 0
        return (
            "Nine coins, numbered 1 to 9; one is heavier. Weigh with "
            "\\boxed{weigh 1,2,3 vs 4,5,6} or accuse with \\boxed{heavy N}."
        ), {}

    def step(self, action):
        self.turns += 1
        turn = self.turns
        info = {"turn": turn, "history": tuple(self.history)}
        accuse = re.search(r"\\boxed\{heavy\s+(\d)\}", action)
        weigh = re.search(r"\\boxed\{weigh\s+([\d,\s]+)vs([\d,\s]+)\}", action)
        if accuse:
            solved = int(accuse.group(1)) == self.heavy
            return ("Right!" if solved else "Wrong coin."), int(solved), True, False, info
        if weigh:
            left = tuple(int(c) for c in re.findall(r"\d", weigh.group(1)))
            right = tuple(int(c) for c in re.findall(r"\d", weigh.group(2)))
            if set(left) & set(right) or not set(left + right) <= set(range(1, 10)):
                observation = "Each coin on at most one pan, coins 1 to 9."
            else:
                result = (
                    "left" if self.heavy in left else "right" if self.heavy in right else "balanced"
                )
                self.history.append(Weighing(left, right, result))
                info["pans"] = {frozenset(left), frozenset(right)}
                observation = f"The scale: {result}."
        else:
            observation = "Weigh or accuse, in \\boxed{...}."
        return observation, 0, turn >= self.max_turns, False, info

    def solution(self):
        group = (self.heavy - 1) // 3
        first = "\\boxed{weigh 1,2,3 vs 4,5,6}"
        a, b = 3 * group + 1, 3 * group + 2
        return [first, f"\\boxed{{weigh {a} vs {b}}}", f"\\boxed{{heavy {self.heavy}}}"]

    def close(self):
        pass
