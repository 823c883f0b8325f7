"""Route parcels off a conveyor into bins by a rule stated up front.

State lives in a `collections.deque` of parcels and a generator that feeds the belt. When the
belt is empty the episode is over: there is no current parcel, and a further step() raises.
"""

import collections
import random

COLOURS = ["red", "blue", "green", "grey"]


class ParcelConveyorEnv:
    metadata = {
        "kind": "rules",
        "skill": "rule following",
        "difficulty": "easy",
        "hint": "Check the weight rule before the colour rule.",
    }

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.belt = collections.deque(
            (rng.choice(COLOURS), rng.randint(1, 30)) for _ in range(rng.randint(4, 7))
        )
        self.total = len(self.belt)
        self.correct = 0
        self.feed = self._feed()
        self.current = next(self.feed)
        rule = "Parcels over 20 kg go to bin C; else red ones to bin A; everything else to bin B."
        return f"{rule}\nOn the belt: {self._show()}. Answer A, B or C.", {"parcels": self.total}

    def _feed(self):
        while self.belt:
            yield self.belt.popleft()

    def _show(self):
        colour, weight = self.current
        return f"a {colour} parcel of {weight} kg"

    @staticmethod
    def _bin(parcel):
        colour, weight = parcel
        return "C" if weight > 20 else "A" if colour == "red" else "B"

    def step(self, action):
        if self.current is None:
            raise LookupError("no parcel on the belt: the episode is over")
        choice = action.strip().upper()
        if choice not in ("A", "B", "C"):
            return (
                f"The parcel waits. Answer A, B or C ({self._show()}).",
                self.correct / (self.total + 1),
                False,
                False,
                {},
            )
        if choice == self._bin(self.current):
            self.correct += 1
        try:
            self.current = next(self.feed)
        except StopIteration:
            reward = self.correct / self.total
            self.current = None
            return f"Belt empty: {self.correct}/{self.total} right.", reward, True, False, {}
        return f"Next: {self._show()}.", self.correct / (self.total + 1), False, False, {}

    def solution(self):
        return [self._bin(self.current)] + [self._bin(p) for p in self.belt]

    def close(self):
        self.belt.clear()
