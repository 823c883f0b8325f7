class CountdownEnv:
    def __init__(self, max_turns=5):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.start = 3 + (seed or 0) % 3
        self.next = self.start
        return f"Count down from {self.start} to 1, one number per turn.", {}

    def step(self, action):
        if action.strip() == str(self.next):
            self.next -= 1
            if self.next == 0:
                return "Liftoff.", 1.0, True, False, {}
            return "Go on.", (self.start - self.next) / (self.start + 1), False, False, {}
        return f"Expected {self.next}. The countdown is aborted.", 0.0, True, False, {}

    def solution(self):
        return [str(n) for n in range(self.start, 0, -1)]

    def close(self):
        pass
