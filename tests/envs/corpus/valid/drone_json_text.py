"""A text env (no tools) whose actions are JSON objects: fly a drone to a beacon.

The beacon's position is hidden; after every move it beeps the Manhattan distance. The
privileged solution flies straight there in two moves. Non-JSON is answered, not raised on.
"""

import json
import random

HEADINGS = {"N": (0, 1), "S": (0, -1), "E": (1, 0), "W": (-1, 0)}


class DroneJsonTextEnv:
    metadata = {
        "kind": "game",
        "skill": "search",
        "difficulty": "easy",
        "hint": "Move along one axis until the distance stops shrinking.",
    }

    def __init__(self, max_turns=15):
        self.max_turns = max_turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.beacon = (rng.randint(-6, 6), rng.randint(-6, 6))
        while self.beacon == (0, 0):
            self.beacon = (rng.randint(-6, 6), rng.randint(-6, 6))
        self.position = (0, 0)
        self.turns = 0
        start = self._distance()
        self.start = start
        return (
            'Fly with {"heading": "N|S|E|W", "distance": k}. The beacon beeps its distance: '
            f"{start}."
        ), {"distance": start}

    def _distance(self):
        return abs(self.beacon[0] - self.position[0]) + abs(self.beacon[1] - self.position[1])

    def step(self, action):
        self.turns += 1
        end = self.turns >= self.max_turns
        try:
            command = json.loads(action)
            heading, distance = command["heading"], int(command["distance"])
            dx, dy = HEADINGS[heading]
        except (ValueError, TypeError, KeyError, OverflowError):
            return "The drone did not understand that.", 0.0, end, False, {}
        if not 1 <= distance <= 12:
            return "Distance must be 1 to 12.", 0.0, end, False, {}
        self.position = (self.position[0] + dx * distance, self.position[1] + dy * distance)
        left = self._distance()
        if left == 0:
            return "Beacon reached.", 1.0, True, False, {}
        progress = max(0.0, 1 - left / self.start) * 0.9
        return f"Beep: {left}.", progress, end, False, {"position": self.position}

    def solution(self):
        moves = []
        x, y = self.beacon
        if x:
            moves.append({"heading": "E" if x > 0 else "W", "distance": abs(x)})
        if y:
            moves.append({"heading": "N" if y > 0 else "S", "distance": abs(y)})
        return [json.dumps(move) for move in moves]

    def close(self):
        pass
