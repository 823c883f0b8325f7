# expect: invalid_action_handled
"""An unmatched answer crashes: re.search(...) is None and .group() is called on it anyway."""

import random
import re


class CrashOnProseEnv:
    max_turns = 8

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.a, self.b = rng.randint(2, 9), rng.randint(2, 9)
        self.stage = 0
        return f"First give {self.a}*{self.b} as \\boxed{{N}}, then its digit sum.", {}

    def step(self, action):
        value = int(re.search(r"\\boxed\{(\d+)\}", action).group(1))
        product = self.a * self.b
        expected = product if self.stage == 0 else sum(map(int, str(product)))
        if value != expected:
            return "no", self.stage / 2, False, False, {}
        self.stage += 1
        return "yes", self.stage / 2, self.stage == 2, False, {}

    def solution(self):
        product = self.a * self.b
        return [f"\\boxed{{{product}}}", f"\\boxed{{{sum(map(int, str(product)))}}}"]

    def close(self):
        pass
