# expect: deterministic
"""A class-level counter makes every episode harder than the last: state leaks across
episodes, so the same seed does not give the same episode."""

import random


class GrowingDifficultyEnv:
    episodes = 0
    max_turns = 20

    def reset(self, seed=None):
        GrowingDifficultyEnv.episodes += 1
        rng = random.Random(seed)
        length = 2 + GrowingDifficultyEnv.episodes % 5
        self.sequence = [rng.choice("LR") for _ in range(length)]
        self.done = 0
        return f"Repeat this sequence one letter per turn: {''.join(self.sequence)}", {}

    def step(self, action):
        if action.strip() == self.sequence[self.done]:
            self.done += 1
        finished = self.done == len(self.sequence)
        return "ok", self.done / len(self.sequence), finished, False, {}

    def solution(self):
        return list(self.sequence)

    def close(self):
        pass
