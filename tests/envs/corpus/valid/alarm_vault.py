"""A vault with a four-letter code. Anything that is not a four-letter code trips the alarm.

Hidden information: the code. A wrong code is answered with how many letters sit in the right
place, so a player narrows it down over turns; the privileged solution (it knows the code) is
one action. A stated budget of guesses is part of the task: using it up ends the episode
(terminated) with the best progress as partial credit. Stepping a finished episode raises.
"""

import random
import re

LETTERS = "ABCDEFGH"
CODE = re.compile(r"^\s*\\boxed\{\s*([A-Za-z]{4})\s*\}\s*$")


class AlarmVaultEnv:
    metadata = {
        "kind": "game",
        "skill": "deduction",
        "difficulty": "medium",
        "hint": "Change one position at a time; the count tells you if it was right.",
    }

    def __init__(self, max_turns=12):
        self.max_turns = max_turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.code = "".join(rng.choice(LETTERS) for _ in range(4))
        self.guesses = []
        self.best = 0
        self.over = False
        text = (
            f"The vault takes a 4-letter code over the letters {LETTERS}. Answer with "
            "\\boxed{ABCD}. Anything else trips the alarm. "
            f"You have {self.max_turns} tries."
        )
        return text, {"letters": LETTERS}

    def _end(self, text, reward):
        self.over = True
        return text, reward, True, False, {"guesses": len(self.guesses)}

    def step(self, action):
        if self.over:
            raise RuntimeError("the vault episode is over; call reset()")
        match = CODE.match(action)
        if match is None:
            return self._end("ALARM! The guards arrive.", self.best / 5)
        guess = match.group(1).upper()
        self.guesses.append(guess)
        if guess == self.code:
            return self._end("The vault swings open.", 1.0)
        placed = sum(a == b for a, b in zip(guess, self.code, strict=True))
        self.best = max(self.best, placed)
        if len(self.guesses) >= self.max_turns:
            return self._end(f"{placed} in place. Out of tries.", self.best / 5)
        return f"{placed} of 4 letters in place.", self.best / 5, False, False, {}

    def solution(self):
        return [f"\\boxed{{{self.code}}}"]

    def close(self):
        pass
