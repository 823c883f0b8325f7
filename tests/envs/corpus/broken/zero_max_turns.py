# expect: constructs
"""max_turns = 0: an episode with no turns at all."""


class ZeroBudgetEnv:
    max_turns = 0

    def reset(self, seed=None):
        return "Say 'a' then 'b'.", {}

    def step(self, action):
        return "ok", 1.0 if action == "b" else 0.5, action == "b", False, {}

    def solution(self):
        return ["a", "b"]

    def close(self):
        pass
