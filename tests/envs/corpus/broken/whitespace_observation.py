# expect: reset_returns_text
"""The observation is a board drawn with spaces only: empty after stripping, nothing to read."""


class BlankBoardEnv:
    max_turns = 10

    def reset(self, seed=None):
        self.marks = 0
        return "   \n   \n   ", {}

    def step(self, action):
        self.marks += 1
        return "X  \n   \n   ", self.marks / 3, self.marks == 3, False, {}

    def solution(self):
        return ["mark"] * 3

    def close(self):
        pass
