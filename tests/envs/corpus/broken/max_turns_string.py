# expect: constructs
"""max_turns read from a config string and never converted: "12" is not an int."""

CONFIG = {"max_turns": "12"}


class ConfiguredEnv:
    def __init__(self):
        self.max_turns = CONFIG["max_turns"]

    def reset(self, seed=None):
        self.said = []
        return "Say 'a' then 'b'.", {}

    def step(self, action):
        self.said.append(action)
        done = self.said[-2:] == ["a", "b"]
        return "ok", 1.0 if done else 0.0, done, False, {}

    def solution(self):
        return ["a", "b"]

    def close(self):
        pass
