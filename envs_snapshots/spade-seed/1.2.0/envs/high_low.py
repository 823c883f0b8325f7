"""Higher or lower with a known deck: count the cards already seen to call the next one
(probabilistic reasoning under hidden information, plus when to spend a skip).

Difficulty levels grow the deck and the number of correct calls needed; lower levels forgive
fewer wrong calls so that guessing still loses."""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")

# Difficulty levels: (deck size range, correct calls needed, wrong calls that lose, skips,
# turn budget). The deck always outlasts the game; the top level is the original task.
LEVELS = [
    ((5, 7), 3, 1, 1, 5),
    ((8, 10), 4, 2, 2, 8),
    ((10, 13), 5, 2, 2, 11),
    ((12, 16), 6, 3, 3, 15),
    ((14, 20), 8, 3, 3, 20),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


class HighLowEnv:
    difficulty_levels = len(LEVELS)
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

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][4]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        tops, self.target, self.max_misses, skips, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.top = self._rng.randint(*tops)
        self.deck = list(range(1, self.top + 1))
        self._rng.shuffle(self.deck)
        self.seen = [self.deck.pop()]
        self.correct = self.misses = 0
        self.skips = skips
        self.turns = 0
        obs = (
            f"A deck holds the cards 1 to {self.top}, each exactly once, shuffled. The first "
            f"card is {self.seen[0]}. Each turn, call whether the next card is \\boxed{{higher}} "
            f"or \\boxed{{lower}} than the current one, or \\boxed{{skip}} to reveal it without "
            f"a call ({skips} skip{'s' if skips > 1 else ''} available). Make {self.target} "
            f"correct calls before you make {self.max_misses} wrong "
            f"one{'s' if self.max_misses > 1 else ''}."
        )
        return obs, {"top": self.top, "first_card": self.seen[0]}

    def _progress(self) -> float:
        return round(0.9 * self.correct / self.target, 4)

    def _status(self) -> str:
        return (
            f"Correct {self.correct}/{self.target}, wrong {self.misses}/{self.max_misses}, "
            f"skips left {self.skips}. Cards seen: {', '.join(map(str, self.seen))}."
        )

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        found = _BOXED.findall(action)
        call = found[-1].strip().lower() if found else ""
        if self.correct == self.target or self.misses == self.max_misses:
            obs = "The game is over; call reset() to play again."
        elif call not in ("higher", "lower", "skip") or (call == "skip" and not self.skips):
            obs = "Invalid action: \\boxed{higher}, \\boxed{lower}, or \\boxed{skip} while skips remain."
        else:
            obs = self._draw(call)
            if self.correct == self.target:
                return obs + " You win!", 1.0, True, False, info
            if self.misses == self.max_misses:
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
        for card in reversed(self.deck[-self.target :]):
            calls.append("\\boxed{higher}" if card > previous else "\\boxed{lower}")
            previous = card
        return calls

    def close(self):
        pass
