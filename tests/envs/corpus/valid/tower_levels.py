"""Tower of Hanoi with a difficulty knob: level d moves d + 2 disks (2 disks in 3 moves at
level 0, 5 disks in 31 at the top), with a budget of twice the shortest solution. Credit is
paid only for disks already resting on the target peg from the bottom up."""

import random
import re

MOVE = re.compile(r"\\boxed\{\s*([ABC])\s*(?:->|to|-)\s*([ABC])\s*\}", re.IGNORECASE)


class TowerLevelsEnv:
    difficulty_levels = 4

    def __init__(self):
        self.max_turns = 2 * (2 ** (self.difficulty_levels + 1) - 1)

    def reset(self, seed=None, options=None):
        level = (options or {}).get("difficulty", self.difficulty_levels - 1)
        self.disks = level + 2
        self.max_turns = 2 * (2**self.disks - 1)
        # The seed picks which peg is the target; the tower starts on another one.
        rng = random.Random(seed)
        self.start, self.target = rng.sample("ABC", 2)
        self.pegs = {p: [] for p in "ABC"}
        self.pegs[self.start] = list(range(self.disks, 0, -1))
        self.turns = 0
        return (
            f"{self.disks} disks are stacked on peg {self.start}. Move the tower to peg "
            f"{self.target}, one disk per turn, never a larger disk on a smaller one. "
            f"Reply \\boxed{{X->Y}}. You have {self.max_turns} moves."
        ), {}

    def _credit(self):
        placed = 0
        for expected, disk in zip(range(self.disks, 0, -1), self.pegs[self.target], strict=False):
            if disk != expected:
                break
            placed += 1
        return 0.5 * placed / self.disks

    def step(self, action):
        self.turns += 1
        out = self.turns >= self.max_turns
        match = MOVE.search(action)
        if not match:
            return "Reply with a move such as \\boxed{A->B}.", self._credit(), out, False, {}
        src, dst = match.group(1).upper(), match.group(2).upper()
        if not self.pegs[src] or (self.pegs[dst] and self.pegs[dst][-1] < self.pegs[src][-1]):
            return f"Illegal move {src}->{dst}.", self._credit(), out, False, {}
        self.pegs[dst].append(self.pegs[src].pop())
        if len(self.pegs[self.target]) == self.disks:
            return "Tower moved!", 1.0, True, False, {}
        state = " ".join(f"{p}:{self.pegs[p]}" for p in "ABC")
        return f"Moved {src}->{dst}. {state}", self._credit(), out, False, {}

    def solution(self):
        spare = ({"A", "B", "C"} - {self.start, self.target}).pop()
        moves = []

        def hanoi(n, src, dst, via):
            if n:
                hanoi(n - 1, src, via, dst)
                moves.append(f"\\boxed{{{src}->{dst}}}")
                hanoi(n - 1, via, dst, src)

        hanoi(self.disks, self.start, self.target, spare)
        return moves

    def close(self):
        pass
