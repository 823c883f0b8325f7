# expect: multi_turn
"""Wrong guesses get feedback, but the declared budget is one turn: the feedback is never
used, every episode ends on its first action."""

import random


class OneTurnBudgetEnv:
    max_turns = 1

    def reset(self, seed=None):
        self.secret = random.Random(seed).randint(1, 10)
        self.turns = 0
        return "Guess a number from 1 to 10; answer with the number.", {}

    def step(self, action):
        self.turns += 1
        guess = action.strip()
        if guess == str(self.secret):
            return "Right.", 1.0, True, False, {}
        hint = "higher" if guess.isdigit() and int(guess) < self.secret else "lower"
        return f"Wrong, go {hint}.", 0.0, False, self.turns >= self.max_turns, {}

    def solution(self):
        return [str(self.secret)]

    def close(self):
        pass
