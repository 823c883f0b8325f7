# expect: solution_returns_actions
"""solution() returns one string of all moves instead of a list of actions."""


class JoinedMovesEnv:
    max_turns = 6

    def reset(self, seed=None):
        self.moves = []
        return "Type up, up, down (one per turn).", {}

    def step(self, action):
        self.moves.append(action.strip())
        done = self.moves == ["up", "up", "down"]
        return "ok", len(self.moves) / 3 if done else 0.0, done, len(self.moves) >= 6, {}

    def solution(self):
        return "up\nup\ndown"

    def close(self):
        pass
