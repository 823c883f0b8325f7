# expect: loads
"""Module code that reads a data file next to it: the sandbox has no such file."""

import json

with open("questions.json", encoding="utf-8") as handle:
    QUESTIONS = json.load(handle)


class QuestionFileEnv:
    def reset(self, seed=None):
        self.question = QUESTIONS[seed % len(QUESTIONS)]
        return self.question["text"], {}

    def step(self, action):
        return "ok", 1.0, True, False, {}

    def solution(self):
        return [self.question["answer"]]

    def close(self):
        pass
