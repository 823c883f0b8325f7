"""A dungeon of rooms with coloured locked doors and single-use keys: reach the treasure
without wasting a key on the wrong door (planning with consumable resources).

Difficulty levels add rooms, locked doors and route length, and reject more forgiving dungeons."""

import random
import re
from collections import deque

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_GO = re.compile(r"^(?:go\s+)?([a-z])$")
COLOURS = ("red", "blue", "green")

# Difficulty levels: (room count range, locked door count range, shortest route length range,
# least doors the route opens, most wins of 30 random walks, length of those walks (also the
# move budget)). The walks reject dungeons that are too forgiving; the top level is the
# original task.
LEVELS = [
    ((4, 5), (2, 3), (2, 4), 1, 12, 6),
    ((5, 7), (2, 4), (3, 7), 1, 6, 12),
    ((6, 8), (3, 5), (4, 10), 2, 4, 18),
    ((7, 10), (3, 6), (5, 12), 2, 3, 24),
    ((9, 11), (3, 6), (6, 18), 2, 2, 30),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


class KeyDungeonEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "train",
        "skill": "planning",
        "difficulty": "hard",
        "hint": "Plan the whole route before moving. Work backwards from the treasure: list the "
        "locked doors that lie on its path, then for each one find a key of that colour you can "
        "reach without spending a key that a later door needs. Keys are used up, so count keys "
        "per colour against the doors you must open and never open a door that only leads to "
        "a dead end unless a key you need lies behind it.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][5]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.max_turns = self._turns_given or LEVELS[self.level][5]
        self._rng = random.Random(seed)
        while not self._generate():
            pass
        self.state = self.start
        self.best = 0.0
        self.turns = 0
        obs = (
            f"You are in a dungeon of {self.n} rooms, A-{_name(self.n - 1)}; the treasure is in "
            f"room {_name(self.goal)}. Some doors are locked with a colour. Walking through a "
            "locked door uses up one key of its colour and the door then stays open; keys are "
            "picked up on entering a room. Move to a neighbouring room with \\boxed{go X}. "
            f"Reach the treasure within {self.max_turns} moves.\n" + self._describe()
        )
        return obs, {"rooms": self.n}

    # ----- generation -------------------------------------------------------------------
    def _generate(self) -> bool:
        """Draw a random dungeon; keep it only if it is solvable in a few moves, its route
        opens at least two doors, and wandering at random almost always wastes a key."""
        rooms, locks, moves_range, min_opened, max_wins, _ = LEVELS[self.level]
        rng, self.n = self._rng, self._rng.randint(*rooms)
        self.doors = []
        for room in range(1, self.n):
            colour = rng.choice(COLOURS) if rng.random() < 0.5 else None
            self.doors.append((room, rng.randrange(max(0, room - 4), room), colour))
        locked = [colour for _, _, colour in self.doors if colour]
        if not locks[0] <= len(locked) <= locks[1]:
            return False
        self.keys = [(rng.randrange(self.n), rng.choice(locked)) for _ in range(len(locked) - 1)]
        self.goal = rng.randrange(self.n // 2, self.n)
        self.start = (0, 0, self._pickup(0, 0))
        self.dist = self._distances_to_goal()
        moves = self.dist.get(self.start)
        if (
            moves is None
            or not moves_range[0] <= moves <= moves_range[1]
            or bin(self._route()[-1][1]).count("1") < min_opened
        ):
            return False
        return self._random_walk_wins(rng.random()) <= max_wins

    def _random_walk_wins(self, seed, walks=30) -> int:
        """How many of `walks` uniformly random walks reach the treasure in time."""
        rng, wins = random.Random(seed), 0
        for _ in range(walks):
            state = self.start
            for _ in range(LEVELS[self.level][5]):
                room = state[0]
                target = rng.choice(
                    [b if a == room else a for a, b, _ in self.doors if room in (a, b)]
                )
                state = self._try_move(state, target)[0] or state
                if state[0] == self.goal or self.dist[state] is None:
                    break
            wins += state[0] == self.goal
        return wins

    # ----- state transitions ------------------------------------------------------------
    # A state is (room, bitmask of opened doors, bitmask of collected keys).
    def _pickup(self, room, collected) -> int:
        for k, (where, _) in enumerate(self.keys):
            if where == room:
                collected |= 1 << k
        return collected

    def _held(self, state, colour) -> int:
        _, opened, collected = state
        have = sum(1 for k, (_, c) in enumerate(self.keys) if c == colour and collected >> k & 1)
        used = sum(1 for d, (_, _, c) in enumerate(self.doors) if c == colour and opened >> d & 1)
        return have - used

    def _try_move(self, state, target):
        """Return (new_state, message); new_state is None when the move is impossible."""
        room, opened, collected = state
        for d, (a, b, colour) in enumerate(self.doors):
            if {a, b} != {room, target}:
                continue
            if colour and not opened >> d & 1:
                if self._held(state, colour) == 0:
                    return (
                        None,
                        f"The door to {_name(target)} is locked ({colour}) and you have no {colour} key.",
                    )
                opened |= 1 << d
            return (
                target,
                opened,
                self._pickup(target, collected),
            ), f"You enter room {_name(target)}."
        return None, f"There is no door from {_name(room)} to {_name(target)}."

    def _distances_to_goal(self):
        """Explore every reachable state, then count moves to the treasure backwards;
        states from which the treasure cannot be reached get None."""
        edges, queue, seen = {}, deque([self.start]), {self.start}
        while queue:
            state = queue.popleft()
            edges[state] = []
            if state[0] == self.goal:
                continue
            for target in range(self.n):
                nxt, _ = self._try_move(state, target)
                if nxt:
                    edges[state].append(nxt)
                    if nxt not in seen:
                        seen.add(nxt)
                        queue.append(nxt)
        parents = {s: [] for s in edges}
        for state, nexts in edges.items():
            for nxt in nexts:
                parents[nxt].append(state)
        dist = {s: 0 for s in edges if s[0] == self.goal}
        queue = deque(dist)
        while queue:
            state = queue.popleft()
            for prev in parents[state]:
                if prev not in dist:
                    dist[prev] = dist[state] + 1
                    queue.append(prev)
        return {s: dist.get(s) for s in edges}

    def _route(self):
        """Shortest sequence of states from the start to the treasure."""
        route, state = [], self.start
        while self.dist[state]:
            options = [self._try_move(state, target)[0] for target in range(self.n)]
            state = min(
                (s for s in options if s and self.dist[s] is not None),
                key=lambda s: (self.dist[s], s),
            )
            route.append(state)
        return route

    # ----- play -------------------------------------------------------------------------
    def _describe(self) -> str:
        room, opened, collected = self.state
        lines = []
        for r in range(self.n):
            exits = []
            for d, (a, b, colour) in enumerate(self.doors):
                if r in (a, b):
                    lock = f"[{colour}]" if colour and not opened >> d & 1 else ""
                    exits.append(_name(b if r == a else a) + lock)
            loot = [
                c for k, (where, c) in enumerate(self.keys) if where == r and not collected >> k & 1
            ]
            keys = f"; keys: {', '.join(loot)}" if loot else ""
            lines.append(f"{_name(r)}: exits {', '.join(sorted(exits))}{keys}")
        held = [f"{c} x{self._held(self.state, c)}" for c in COLOURS if self._held(self.state, c)]
        lines.append(f"You are in room {_name(room)}. Keys held: {', '.join(held) or 'none'}.")
        return "\n".join(lines)

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        found = _BOXED.findall(action)
        match = _GO.match(found[-1].strip().lower()) if found else None
        target = ord(match.group(1)) - ord("a") if match else -1
        if self.state[0] == self.goal or self.dist[self.state] is None:
            obs = "The game is over; call reset() to play again."
        elif not 0 <= target < self.n:
            obs = (
                f"Invalid action: use \\boxed{{go X}} with X a room from A to {_name(self.n - 1)}."
            )
        else:
            nxt, obs = self._try_move(self.state, target)
            if nxt:
                self.state = nxt
                if nxt[0] == self.goal:
                    return obs + " The treasure is yours!", 1.0, True, False, info
                if self.dist[nxt] is None:
                    return (
                        obs + " You have wasted a key: the treasure can no longer be reached.",
                        self.best,
                        True,
                        False,
                        info,
                    )
                self.best = max(
                    self.best, round(0.9 * (1 - self.dist[nxt] / self.dist[self.start]), 4)
                )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        out_of_turns = self.turns >= self.max_turns
        obs += "\n" + self._describe() + ("\nOut of moves." if out_of_turns else "")
        return obs, self.best, out_of_turns, False, info

    def solution(self):
        return [f"\\boxed{{go {_name(state[0])}}}" for state in self._route()]

    def close(self):
        pass


def _name(room: int) -> str:
    return chr(ord("A") + room)
