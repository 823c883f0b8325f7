# expect: step_types
"""The winning step returns None for info; every other step returns a dict."""

import random


class NoInfoWinEnv:
    max_turns = 8

    def reset(self, seed=None):
        self.key = random.Random(seed).choice("abcde")
        self.opened = False
        return "One of the doors a-e hides the exit. Say 'look' first, then the letter.", {}

    def step(self, action):
        choice = action.strip()
        if choice == "look":
            self.opened = True
            return f"A draught comes from door {self.key}.", 0.5, False, False, {}
        if self.opened and choice == self.key:
            return "Out!", 1.0, True, False, None
        return "A wall.", 0.0, False, False, {}

    def solution(self):
        return ["look", self.key]

    def close(self):
        pass
