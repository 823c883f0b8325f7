"""Three riddles in a row; each right answer unlocks the next. The env itself truncates the
episode when its turn limit runs out (truncated, not terminated), as gymnasium envs often do."""

import random
import re

RIDDLES = [
    ("What has keys but can't open locks?", {"piano", "keyboard"}),
    ("What gets wetter the more it dries?", {"towel"}),
    ("What has a neck but no head?", {"bottle"}),
    ("What can you catch but not throw?", {"cold", "a cold"}),
    ("What has hands but cannot clap?", {"clock", "a clock"}),
    ("What goes up but never comes down?", {"age", "your age"}),
    ("What has one eye but cannot see?", {"needle", "a needle"}),
]
ANSWER = re.compile(r"\\boxed\{([^{}]*)\}")


class RiddleChainEnv:
    metadata = {
        "kind": "riddles",
        "skill": "lateral thinking",
        "difficulty": "easy",
        "hint": "Read every riddle literally.",
    }

    def __init__(self, max_turns=7):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.chain = random.Random(seed).sample(RIDDLES, 3)
        self.solved = 0
        self.turns = 0
        return f"Riddle 1 of 3: {self.chain[0][0]} Answer as \\boxed{{word}}.", {}

    def step(self, action):
        self.turns += 1
        match = ANSWER.search(action)
        answer = match.group(1).strip().lower() if match else ""
        if answer in self.chain[self.solved][1]:
            self.solved += 1
            if self.solved == 3:
                return "All three solved.", 1.0, True, False, {}
            observation = f"Yes! Riddle {self.solved + 1} of 3: {self.chain[self.solved][0]}"
        else:
            observation = f"No. {self.chain[self.solved][0]}"
        return observation, self.solved / 3 * 0.9, False, self.turns >= self.max_turns, {}

    def solution(self):
        return [f"\\boxed{{{sorted(answers)[0]}}}" for _, answers in self.chain]

    def close(self):
        pass
