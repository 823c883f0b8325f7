"""Haggle with a scripted seller who hides his walk-away price and concedes by a fixed rule
(negotiation: probe the other side's limits without breaking off the deal).

Higher difficulty levels give the seller a lower secret minimum and slower concessions, so
more offers are needed."""

import math
import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_OFFER = re.compile(r"^offer\s+\$?(\d+)$")
ITEMS = [
    "an antique clock",
    "a used road bike",
    "a vintage guitar",
    "a leather armchair",
    "a brass telescope",
    "a hand-woven rug",
    "a film camera",
    "a mahogany desk",
]
PATIENCE = 3

# Difficulty levels: (range of the seller's minimum as a share of the list price, range of
# his concession rate, turn budget). The top level is the original task.
LEVELS = [
    ((0.8, 0.9), (0.45, 0.55), 4),
    ((0.75, 0.85), (0.4, 0.5), 5),
    ((0.7, 0.8), (0.35, 0.45), 6),
    ((0.6, 0.75), (0.3, 0.4), 7),
    ((0.55, 0.75), (0.25, 0.4), 8),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


class HaggleEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "heldout",
        "skill": "negotiation",
        "difficulty": "medium",
        "hint": "Each counter-offer moves the seller's asking price a fixed fraction of the way "
        "toward your offer, but never below his secret minimum, so low offers pull the price "
        "down fastest. Offers below his insult line gain nothing and cost patience: start "
        "moderately low, raise your offer after an insult, then keep repeating the lowest offer "
        "he tolerates. Watch how far each counter moves to learn his concession rate, and "
        "accept as soon as the ask fits your budget.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][2]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        minimums, rates, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.item = self._rng.choice(ITEMS)
        self.list_price = self._rng.randrange(100, 501, 10)
        self.minimum = round(self.list_price * self._rng.uniform(*minimums))
        self.budget = self.minimum + round(self.list_price * self._rng.uniform(0.04, 0.08))
        self.insult_line = round(self.minimum * self._rng.uniform(0.75, 0.85))
        self.rate = self._rng.uniform(*rates)
        self.ask = self.list_price
        self.patience = PATIENCE
        self.turns = 0
        obs = (
            f"A seller offers {self.item}, asking ${self.list_price}. You may spend at most "
            f"${self.budget}. Each turn either \\boxed{{offer X}} (a whole number of dollars, "
            "at most your budget) or \\boxed{accept} to pay his current ask. He takes any offer "
            "that meets his ask and otherwise counters with a lower ask. Offers he finds "
            f"insulting earn no concession, and after {PATIENCE} insults he walks away. You "
            f"have {self.max_turns} turns to buy it within budget."
        )
        return obs, {"list_price": self.list_price, "budget": self.budget}

    def _progress(self) -> float:
        # Partial credit: the share of the gap between list price and budget already conceded.
        return round(
            0.9 * min(1.0, (self.list_price - self.ask) / (self.list_price - self.budget)), 4
        )

    def _parse(self, action: str):
        found = _BOXED.findall(action)
        text = found[-1].strip().lower() if found else ""
        if text == "accept":
            return "accept", None
        match = _OFFER.match(text.replace(",", ""))
        return ("offer", int(match.group(1))) if match else (None, None)

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        verb, amount = self._parse(action)
        if verb == "accept" and self.ask <= self.budget:
            return (
                f"Deal at ${self.ask}. You bought {self.item} within budget!",
                1.0,
                True,
                False,
                info,
            )
        if verb == "offer" and 1 <= amount <= self.budget and amount >= self.ask:
            return (
                f'"Done!" Deal at ${amount}. You bought {self.item} within budget!',
                1.0,
                True,
                False,
                info,
            )
        if verb == "accept":
            obs = f"You cannot afford his ask of ${self.ask} (budget ${self.budget})."
        elif verb == "offer" and 1 <= amount <= self.budget:
            obs = self._counter(amount)
            if self.patience == 0:
                return obs, 0.0, True, False, info
        else:
            obs = f"Invalid action: \\boxed{{offer X}} with 1 <= X <= {self.budget}, or \\boxed{{accept}}."
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        out_of_turns = self.turns >= self.max_turns
        return (
            obs + (" Time is up; no deal." if out_of_turns else ""),
            self._progress(),
            out_of_turns,
            False,
            info,
        )

    def _counter(self, amount) -> str:
        if amount < self.insult_line:
            self.patience -= 1
            if self.patience == 0:
                return f"${amount}?! That is the last straw. The seller walks away."
            return f'"${amount}? That\'s an insult!" His ask stays at ${self.ask}.'
        self.ask = max(self.minimum, self.ask - math.ceil(self.rate * (self.ask - amount)))
        return f"\"I can't take ${amount}. I'll let it go for ${self.ask}.\""

    def solution(self):
        # Repeat the lowest tolerated offer until the ask fits the budget, then accept.
        actions, ask = [], self.list_price
        while ask > self.budget:
            actions.append(f"\\boxed{{offer {self.insult_line}}}")
            ask = max(self.minimum, ask - math.ceil(self.rate * (ask - self.insult_line)))
        return actions + ["\\boxed{accept}"]

    def close(self):
        pass
