"""Sort a row of cards with adjacent swaps. Randomness comes from the module-level generator,
seeded in reset(): seeded, not banned."""

import random

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]


class DeckSortEnv:
    metadata = {
        "kind": "puzzle",
        "skill": "planning",
        "difficulty": "easy",
        "hint": "Bubble the highest card to the right first.",
    }
    max_turns = 25

    def reset(self, seed=None):
        random.seed(seed)
        self.cards = random.sample(RANKS, 5)
        while self.cards == sorted(self.cards, key=RANKS.index):
            random.shuffle(self.cards)
        self.turns = 0
        return (
            f"Cards: {' '.join(self.cards)}. Sort them low to high (2 < ... < A). "
            "Swap neighbours with \\boxed{swap i} (i from 1 to 4)."
        ), {}

    def _order(self):
        pairs = zip(self.cards, self.cards[1:], strict=False)
        return sum(RANKS.index(a) < RANKS.index(b) for a, b in pairs) / 4

    def step(self, action):
        self.turns += 1
        text = action.replace(" ", "")
        if text.startswith("\\boxed{swap") and text.endswith("}") and text[11:-1].isdigit():
            i = int(text[11:-1])
            if 1 <= i <= 4:
                self.cards[i - 1], self.cards[i] = self.cards[i], self.cards[i - 1]
                if self._order() == 1.0:
                    return f"Sorted: {' '.join(self.cards)}", 1.0, True, False, {}
                observation = f"Cards: {' '.join(self.cards)}"
            else:
                observation = "No such position."
        else:
            observation = "Use \\boxed{swap i}."
        # The budget is part of the task: running out ends the episode with partial credit.
        return observation, 0.9 * self._order(), self.turns >= self.max_turns, False, {}

    def solution(self):
        cards, swaps = list(self.cards), []
        for end in range(len(cards) - 1, 0, -1):
            for i in range(end):
                if RANKS.index(cards[i]) > RANKS.index(cards[i + 1]):
                    cards[i], cards[i + 1] = cards[i + 1], cards[i]
                    swaps.append(f"\\boxed{{swap {i + 1}}}")
        return swaps

    def close(self):
        pass
