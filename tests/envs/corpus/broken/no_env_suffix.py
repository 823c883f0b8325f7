# expect: single_env_class
"""The class is called `Maze`: nothing ends in 'Env', so there is nothing to run."""


class Maze:
    def reset(self, seed=None):
        self.position = 0
        return "Walk east three times.", {}

    def step(self, action):
        self.position += action == "east"
        done = self.position == 3
        return "ok", self.position / 3, done, False, {}

    def solution(self):
        return ["east"] * 3

    def close(self):
        pass
