# expect: step_types
"""`terminated` computed as an int on the correct moves (1 when done), not a bool."""


class IntDoneEnv:
    max_turns = 9

    def reset(self, seed=None):
        self.stack = 0
        return "Stack three blocks: say 'stack' three times.", {}

    def step(self, action):
        if action.strip() != "stack":
            return "The tower waits.", self.stack / 3, False, False, {}
        self.stack += 1
        return f"{self.stack} high.", self.stack / 3, int(self.stack == 3), False, {}

    def solution(self):
        return ["stack"] * 3

    def close(self):
        pass
