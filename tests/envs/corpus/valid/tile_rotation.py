# Rotate the pipe tiles of one row until water can flow from left to right.
# No max_turns: the env never ends an episode on its own except by solving it, so the player's
# turn cap is what stops a long one. The reward is the share of tiles already aligned.
import random

# Each tile is drawn with box-drawing characters; rotating turns it a quarter to the right.
SHAPES = {
    "straight": ["═", "║", "═", "║"],
    "elbow": ["╗", "╝", "╚", "╔"],
    "tee": ["╦", "╣", "╩", "╠"],
}
GOAL = {"straight": 0, "elbow": 0, "tee": 0}


def draw(tiles):
    return " ".join(SHAPES[kind][turn] for kind, turn in tiles)


class TileRotationEnv:
    metadata = {
        "kind": "puzzle",
        "skill": "spatial",
        "difficulty": "easy",
        "hint": "Each tile has one orientation that carries water left to right.",
    }

    def reset(self, seed=None):
        rng = random.Random(seed)
        kinds = [rng.choice(sorted(SHAPES)) for _ in range(rng.randint(4, 6))]
        self.tiles = [(kind, rng.randrange(4)) for kind in kinds]
        if all(turn == GOAL[kind] for kind, turn in self.tiles):
            kind, _ = self.tiles[0]
            self.tiles[0] = (kind, 2)
        return (
            f"Tiles: {draw(self.tiles)}\nThe target row looks like "
            f"{draw([(k, GOAL[k]) for k, _ in self.tiles])}.\n"
            "Rotate a tile a quarter turn with 'rotate N' (N counted from 1)."
        ), {}

    def _aligned(self):
        return sum(turn == GOAL[kind] for kind, turn in self.tiles) / len(self.tiles)

    def step(self, action):
        words = action.split()
        if len(words) != 2 or words[0] != "rotate" or not words[1].isdigit():
            return "Say 'rotate N'.", self._aligned() * 0.9, False, False, {}
        index = int(words[1]) - 1
        if not 0 <= index < len(self.tiles):
            return f"There are {len(self.tiles)} tiles.", self._aligned() * 0.9, False, False, {}
        kind, turn = self.tiles[index]
        self.tiles[index] = (kind, (turn + 1) % 4)
        if self._aligned() == 1.0:
            return f"Water flows: {draw(self.tiles)}", 1.0, True, False, {}
        return f"Tiles: {draw(self.tiles)}", self._aligned() * 0.9, False, False, {}

    def solution(self):
        return [
            f"rotate {i + 1}"
            for i, (kind, turn) in enumerate(self.tiles)
            for _ in range((GOAL[kind] - turn) % 4)
        ]

    def close(self):
        pass
