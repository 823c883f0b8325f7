"""Explore a cave you cannot see: find the key, then the door it opens.

Hidden information is revealed by acting: a room shows its exits and contents only once you are
in it. Plain-text commands ("go east", "take key", "open door"). The declared budget (40) is
larger than the default turn cap; the env truncates its own episodes there.
"""

import random
from collections import deque

MOVES = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}


class CaveKeysEnv:
    metadata = {
        "kind": "game",
        "skill": "exploration",
        "difficulty": "medium",
        "hint": "Explore systematically and remember the rooms you have seen.",
    }

    def __init__(self, max_turns=40):
        self.max_turns = max_turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.size = 4
        cells = [(x, y) for x in range(self.size) for y in range(self.size)]
        # A random spanning tree: every room reachable, passages hidden from the player.
        self.passages = {cell: set() for cell in cells}
        seen, frontier = {(0, 0)}, [(0, 0)]
        while frontier:
            cell = frontier.pop(rng.randrange(len(frontier)))
            options = [self._next(cell, m) for m in MOVES]
            options = [c for c in options if c in self.passages and c not in seen]
            rng.shuffle(options)
            for other in options[: rng.randint(1, 2)]:
                seen.add(other)
                self.passages[cell].add(other)
                self.passages[other].add(cell)
                frontier.append(other)
            if len(options) > 2:
                frontier.append(cell)
        far = [c for c in sorted(seen) if c != (0, 0)]
        self.key, self.door = rng.sample(far, 2)
        self.here, self.has_key, self.turns = (0, 0), False, 0
        return "You wake in a dark cave. " + self._room(), {}

    def _next(self, cell, move):
        dx, dy = MOVES[move]
        return cell[0] + dx, cell[1] + dy

    def _room(self):
        exits = sorted(m for m in MOVES if self._next(self.here, m) in self.passages[self.here])
        things = []
        if self.here == self.key and not self.has_key:
            things.append("a rusty key lies here")
        if self.here == self.door:
            things.append("a locked door is set in the rock")
        text = f"Exits: {', '.join(exits)}."
        return text + (" " + "; ".join(things) + "." if things else "")

    def step(self, action):
        self.turns += 1
        words = action.lower().split()
        reward = 0.5 if self.has_key else 0.0
        if len(words) == 2 and words[0] == "go" and words[1] in MOVES:
            target = self._next(self.here, words[1])
            if target in self.passages[self.here]:
                self.here = target
                observation = self._room()
            else:
                observation = "Rock. You cannot go that way."
        elif words == ["take", "key"] and self.here == self.key and not self.has_key:
            self.has_key, reward = True, 0.5
            observation = "You take the key."
        elif words == ["open", "door"] and self.here == self.door and self.has_key:
            return "The door grinds open. Daylight!", 1.0, True, False, {}
        else:
            observation = "Nothing happens. Try 'go DIRECTION', 'take key' or 'open door'."
        return observation, reward, False, self.turns >= self.max_turns, {"turn": self.turns}

    def _route(self, start, goal):
        parents, queue = {start: None}, deque([start])
        while queue:
            cell = queue.popleft()
            for move in MOVES:
                other = self._next(cell, move)
                if other in self.passages[cell] and other not in parents:
                    parents[other] = (cell, move)
                    queue.append(other)
        moves = []
        while parents[goal] is not None:
            goal, move = parents[goal]
            moves.append(f"go {move}")
        return moves[::-1]

    def solution(self):
        return [*self._route(self.here, self.key), "take key"] + [
            *self._route(self.key, self.door),
            "open door",
        ]

    def close(self):
        pass
