"""Higher or lower with a known deck: count the cards already seen to call the next one
(probabilistic reasoning under hidden information, plus when to spend a skip)."""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
TARGET = 8
MAX_MISSES = 3
SKIPS = 3


class HighLowEnv:
    metadata = {
        "kind": "game",
        "split": "train",
        "skill": "probability",
        "difficulty": "medium",
        "hint": "The deck holds each value exactly once, so you always know which cards are "
        "still unseen. Count how many unseen values lie above and below the current card and "
        "call the larger side. When the two sides are nearly equal the call is close to a "
        "coin flip: that is the moment to spend a skip, not when the odds are lopsided.",
    }

    def __init__(self, max_turns: int = 20):
        self.max_turns = max_turns
        self._rng = random.Random()

    def reset(self, seed=None):
        self._rng = random.Random(seed)
        self.top = self._rng.randint(14, 20)
        self.deck = list(range(1, self.top + 1))
        self._rng.shuffle(self.deck)
        self.seen = [self.deck.pop()]
        self.correct = self.misses = 0
        self.skips = SKIPS
        self.turns = 0
        obs = (
            f"A deck holds the cards 1 to {self.top}, each exactly once, shuffled. The first "
            f"card is {self.seen[0]}. Each turn, call whether the next card is \\boxed{{higher}} "
            f"or \\boxed{{lower}} than the current one, or \\boxed{{skip}} to reveal it without "
            f"a call ({SKIPS} skips available). Make {TARGET} correct calls before you make "
            f"{MAX_MISSES} wrong ones."
        )
        return obs, {"top": self.top, "first_card": self.seen[0]}

    def _progress(self) -> float:
        return round(0.9 * self.correct / TARGET, 4)

    def _status(self) -> str:
        return (f"Correct {self.correct}/{TARGET}, wrong {self.misses}/{MAX_MISSES}, skips left "
                f"{self.skips}. Cards seen: {', '.join(map(str, self.seen))}.")

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        found = _BOXED.findall(action)
        call = found[-1].strip().lower() if found else ""
        if self.correct == TARGET or self.misses == MAX_MISSES:
            obs = "The game is over; call reset() to play again."
        elif call not in ("higher", "lower", "skip") or (call == "skip" and not self.skips):
            obs = "Invalid action: \\boxed{higher}, \\boxed{lower}, or \\boxed{skip} while skips remain."
        else:
            obs = self._draw(call)
            if self.correct == TARGET:
                return obs + " You win!", 1.0, True, False, info
            if self.misses == MAX_MISSES:
                return obs + " Too many wrong calls. You lose.", self._progress(), True, False, info
        truncated = self.turns >= self.max_turns
        obs += " " + self._status() + (" Out of turns." if truncated else "")
        return obs, self._progress(), False, truncated, info

    def _draw(self, call) -> str:
        previous, card = self.seen[-1], self.deck.pop()
        self.seen.append(card)
        if call == "skip":
            self.skips -= 1
            return f"Skipped: the next card is {card}."
        if (card > previous) == (call == "higher"):
            self.correct += 1
            return f"The card is {card}: correct."
        self.misses += 1
        return f"The card is {card}: wrong."

    def solution(self):
        # With the deck order known, every call can be right.
        calls, previous = [], self.seen[-1]
        for card in reversed(self.deck[-TARGET:]):
            calls.append("\\boxed{higher}" if card > previous else "\\boxed{lower}")
            previous = card
        return calls

    def close(self):
        pass
