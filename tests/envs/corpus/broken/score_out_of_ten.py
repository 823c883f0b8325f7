# expect: step_types
"""Rewards counted as points out of 10 on the way to the goal, not progress in [0, 1]."""

import random


class PointsEnv:
    max_turns = 12

    def reset(self, seed=None):
        self.order = random.Random(seed).sample(["red", "green", "blue"], 3)
        self.next = 0
        return f"Press the buttons in this order: {', '.join(self.order)}.", {}

    def step(self, action):
        if action.strip() != self.order[self.next]:
            return "Nothing happens.", 0.0, False, False, {}
        self.next += 1
        points = 10 * self.next / 3
        return "Click.", round(points, 2), self.next == 3, False, {}

    def solution(self):
        return list(self.order)

    def close(self):
        pass
