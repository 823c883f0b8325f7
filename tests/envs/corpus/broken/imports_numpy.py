# expect: loads
"""Generated envs may use the standard library only; numpy is not there in the sandbox."""

import numpy as np


class GridSumEnv:
    max_turns = 5

    def reset(self, seed=None):
        self.grid = np.random.default_rng(seed).integers(0, 9, size=(3, 3))
        return f"Grid:\n{self.grid}\nGive the sum of each row, one per turn.", {}

    def step(self, action):
        return "ok", 0.0, False, False, {}

    def solution(self):
        return [str(int(row.sum())) for row in self.grid]

    def close(self):
        pass
