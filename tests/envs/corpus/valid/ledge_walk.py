# A ledge of stepping stones; every stone shows a clue to which foot goes next.
# One wrong step and you fall: the episode ends at once with the progress made so far.
# Commands are plain words, there is no declared turn budget.
import random

CLUES = {
    "left": ["moss grows on the right half", "the right edge is cracked", "a gull sits right"],
    "right": ["the left half is wet", "a crack runs down the left", "ivy hides the left side"],
}


class LedgeWalkEnv:
    def reset(self, seed=None):
        rng = random.Random(seed)
        length = rng.randint(5, 8)
        self.path = [rng.choice(["left", "right"]) for _ in range(length)]
        self.clues = [rng.choice(CLUES[foot]) for foot in self.path]
        self.position = 0
        self.fallen = False
        return self._describe("You stand at the start of a narrow ledge."), {"stones": length}

    def _describe(self, lead):
        stone = self.position + 1
        return (
            f"{lead} Stone {stone} of {len(self.path)}: {self.clues[self.position]}. "
            "Step with 'left' or 'right'."
        )

    def step(self, action):
        move = action.strip().lower()
        progress = self.position / len(self.path)
        if move not in ("left", "right"):
            return "You hesitate. Say 'left' or 'right'.", progress, False, False, {}
        if move != self.path[self.position]:
            self.fallen = True
            return "The stone gives way and you fall.", progress, True, False, {"fell": True}
        self.position += 1
        if self.position == len(self.path):
            return "You reach the far side.", 1.0, True, False, {}
        return self._describe("Solid."), self.position / len(self.path), False, False, {}

    def solution(self):
        return list(self.path)

    def close(self):
        self.path = []
