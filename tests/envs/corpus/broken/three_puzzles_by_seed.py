# expect: second_seed
"""A hand-written table of three puzzles indexed by the seed: seeds 0-2 work, seed 3 raises."""

PUZZLES = [
    ("I am an odd number; take away a letter and I become even.", ["think", "seven"]),
    ("What has to be broken before you can use it?", ["think", "egg"]),
    ("What month has 28 days?", ["think", "all"]),
]


class PuzzleTableEnv:
    max_turns = 5

    def reset(self, seed=None):
        self.question, self.answers = PUZZLES[seed or 0]
        self.turn = self.turns = 0
        return f"{self.question} First say 'think', then answer.", {}

    def step(self, action):
        self.turns += 1
        word = action.strip().lower()
        expected = self.answers[self.turn] if self.turn < len(self.answers) else None
        if word != expected:
            return "No.", self.turn / 2, False, self.turns >= self.max_turns, {}
        self.turn += 1
        return "Yes.", self.turn / 2, self.turn == 2, False, {}

    def solution(self):
        return list(self.answers)

    def close(self):
        pass
