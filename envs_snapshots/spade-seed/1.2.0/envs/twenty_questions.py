"""Twenty questions over a visible table of animals: find the hidden one with few yes/no
questions (information gathering: pick questions that split the candidates evenly).

Difficulty levels grow the pool of animals the secret hides among."""

import math
import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
ATTRIBUTES = (
    "mammal",
    "bird",
    "flies",
    "swims",
    "hunts",
    "big",
    "pet",
    "farm",
    "horns",
    "nocturnal",
)
TABLE = {
    "dog": {"mammal", "swims", "pet"},
    "cat": {"mammal", "hunts", "pet", "nocturnal"},
    "horse": {"mammal", "big", "farm"},
    "cow": {"mammal", "big", "farm", "horns"},
    "goat": {"mammal", "farm", "horns"},
    "sheep": {"mammal", "farm"},
    "lion": {"mammal", "big", "hunts"},
    "tiger": {"mammal", "big", "hunts", "swims"},
    "wolf": {"mammal", "hunts", "nocturnal"},
    "elephant": {"mammal", "big"},
    "rhino": {"mammal", "big", "horns"},
    "mouse": {"mammal", "nocturnal"},
    "rabbit": {"mammal", "pet"},
    "bat": {"mammal", "flies", "hunts", "nocturnal"},
    "whale": {"mammal", "big", "swims"},
    "dolphin": {"mammal", "swims", "hunts"},
    "eagle": {"bird", "flies", "hunts"},
    "owl": {"bird", "flies", "hunts", "nocturnal"},
    "parrot": {"bird", "flies", "pet"},
    "chicken": {"bird", "farm"},
    "duck": {"bird", "flies", "swims", "farm"},
    "penguin": {"bird", "swims", "hunts"},
    "ostrich": {"bird", "big"},
    "shark": {"swims", "hunts", "big"},
    "goldfish": {"swims", "pet"},
    "frog": {"swims", "hunts"},
    "crocodile": {"swims", "hunts", "big", "nocturnal"},
    "snake": {"hunts"},
    "bee": {"flies", "farm"},
    "butterfly": {"flies"},
    "spider": {"hunts", "nocturnal"},
}

# Difficulty levels: (pool size, turn budget). Each budget covers the even-split questions
# plus the one guess; the top level is the original task.
LEVELS = [(4, 4), (6, 6), (8, 7), (12, 7), (16, 7)]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def best_question(candidates):
    """The attribute whose yes/no answer splits the candidates most evenly."""
    return min(
        ATTRIBUTES, key=lambda a: abs(2 * sum(a in TABLE[c] for c in candidates) - len(candidates))
    )


class TwentyQuestionsEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "game",
        "split": "train",
        "skill": "information gathering",
        "difficulty": "easy",
        "hint": "Keep the list of animals that match every answer so far. Before each question, "
        "count how many remaining animals have each attribute and ask about the one that is "
        "closest to half of them; an attribute that all or none of them share tells you "
        "nothing. Guess only when exactly one animal is left, since you get a single guess.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.pool_size, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self.pool = sorted(self._rng.sample(sorted(TABLE), self.pool_size))
        self.secret = self._rng.choice(self.pool)
        self.consistent = list(self.pool)
        self.turns = 0
        rows = "\n".join(
            f"{name}: {', '.join(a for a in ATTRIBUTES if a in TABLE[name])}" for name in self.pool
        )
        obs = (
            f"I have picked one of these {self.pool_size} animals (each listed with the attributes "
            f"it has; any attribute not listed is false):\n{rows}\nAsk yes/no questions with "
            "\\boxed{ask ATTRIBUTE}, where ATTRIBUTE is one of: " + ", ".join(ATTRIBUTES) + ". "
            "When you know it, answer with \\boxed{guess ANIMAL}. You get ONE guess and "
            f"{self.max_turns} turns in total."
        )
        return obs, {"pool": list(self.pool)}

    def _progress(self) -> float:
        # Partial credit: bits of information gathered, as a share of the bits needed.
        return round(0.9 * (1 - math.log(len(self.consistent)) / math.log(self.pool_size)), 4)

    def step(self, action):
        self.turns += 1
        info = {"turn": self.turns}
        found = _BOXED.findall(action)
        verb, _, arg = (found[-1].strip().lower() if found else "").partition(" ")
        arg = arg.strip()
        if verb == "guess" and arg in self.pool:
            if arg == self.secret:
                return (
                    f"Yes, it is the {arg}! Solved in {self.turns} turns.",
                    1.0,
                    True,
                    False,
                    info,
                )
            return f"No, it was the {self.secret}. Game over.", self._progress(), True, False, info
        if verb == "ask" and arg in ATTRIBUTES:
            answer = arg in TABLE[self.secret]
            self.consistent = [c for c in self.consistent if (arg in TABLE[c]) == answer]
            obs = f"{arg}? {'Yes' if answer else 'No'}."
        else:
            obs = "Invalid action: use \\boxed{ask ATTRIBUTE} or \\boxed{guess ANIMAL} with a listed animal."
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        out_of_turns = self.turns >= self.max_turns
        return (
            obs + (" Out of turns." if out_of_turns else ""),
            self._progress(),
            out_of_turns,
            False,
            info,
        )

    def solution(self):
        # Ask the most even split each time (in practice at most 6 questions), then guess.
        candidates, actions = list(self.pool), []
        while len(candidates) > 1:
            attribute = best_question(candidates)
            answer = attribute in TABLE[self.secret]
            candidates = [c for c in candidates if (attribute in TABLE[c]) == answer]
            actions.append(f"\\boxed{{ask {attribute}}}")
        return actions + [f"\\boxed{{guess {self.secret}}}"]

    def close(self):
        pass
