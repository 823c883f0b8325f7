# expect: reset_returns_text
"""reset() returns an empty observation: the task text only arrives after the first step."""

import random


class LateIntroEnv:
    max_turns = 6

    def reset(self, seed=None):
        self.target = random.Random(seed).randint(2, 4)
        self.count = 0
        self.intro_pending = True
        return "", {"note": "intro comes with the first step"}

    def step(self, action):
        if self.intro_pending:
            self.intro_pending = False
            return f"Clap {self.target} times: say 'clap'.", 0.0, False, False, {}
        self.count += action.strip() == "clap"
        done = self.count == self.target
        return "clap!", self.count / self.target, done, self.count > self.target, {}

    def solution(self):
        return ["start"] + ["clap"] * self.target

    def close(self):
        pass
