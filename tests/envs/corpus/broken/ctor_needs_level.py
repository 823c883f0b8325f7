# expect: constructs
"""The constructor needs an argument: the contract says an env builds with none."""


class LevelledEnv:
    def __init__(self, level):
        self.level = level
        self.max_turns = 5 + level

    def reset(self, seed=None):
        self.count = 0
        return f"Level {self.level}: say 'go' {self.level} times.", {}

    def step(self, action):
        self.count += action == "go"
        done = self.count >= self.level
        return "ok", self.count / self.level, done, False, {}

    def solution(self):
        return ["go"] * self.level

    def close(self):
        pass
