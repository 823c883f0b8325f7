# expect: invalid_action_handled
"""A penalty for bad input drives the reward below 0: rewards must stay in [0, 1]."""


class PenaltyEnv:
    max_turns = 10

    def reset(self, seed=None):
        self.score = 0.0
        self.stage = 0
        return "Say 'left', then 'right'.", {}

    def step(self, action):
        word = action.strip()
        if word == ("left", "right")[self.stage]:
            self.stage += 1
            self.score = self.stage / 2
        else:
            self.score -= 0.25
        return "ok", self.score, self.stage == 2, False, {}

    def solution(self):
        return ["left", "right"]

    def close(self):
        pass
