# expect: reset_returns_text
"""reset() returns only the observation (the old gym API), not (observation, info)."""


class OldApiEnv:
    max_turns = 5

    def reset(self, seed=None):
        self.steps = 0
        return "Say 'next' twice."

    def step(self, action):
        self.steps += action == "next"
        return "ok", self.steps / 2, self.steps == 2, False, {}

    def solution(self):
        return ["next", "next"]

    def close(self):
        pass
