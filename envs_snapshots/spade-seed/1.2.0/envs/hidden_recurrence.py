"""Infer a hidden second-order linear recurrence from terms you request, then extrapolate it.

The sequence obeys a(n) = P*a(n-1) + Q*a(n-2). Only the early terms can be requested, so
the agent must recover P and Q from a few consecutive terms (two linear equations) and then
run the recurrence forward to a term it cannot see. Teaches sequence induction. Difficulty
levels widen the ranges of P, Q and the start values and push the target term further out;
levels 0 and 1 also give the first terms away in the prompt.
"""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_VISIBLE = 8  # terms a(0) .. a(7) may be requested
_P = [-3, -2, -1, 1, 2, 3]
_Q = [-2, -1, 1, 2]

# Difficulty levels: (choices of P, choices of Q, start value range, target index range,
# terms that may be requested, terms given in the prompt, turn budget). The top level is
# the original task.
LEVELS = [
    ([1, 2], [-1, 1], (1, 5), (4, 5), 4, 2, 5),
    ([-2, -1, 1, 2], [-1, 1], (-5, 5), (5, 7), 5, 1, 6),
    (_P, _Q, (-5, 5), (7, 9), 6, 0, 6),
    (_P, _Q, (-5, 5), (8, 10), 7, 0, 7),
    (_P, _Q, (-5, 5), (9, 11), _VISIBLE, 0, 8),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def _command(action):
    """Split the last \\boxed{...} of the action into (verb, argument text)."""
    found = _BOXED.findall(action) if isinstance(action, str) else []
    parts = found[-1].strip().split(maxsplit=1) if found else []
    if not parts:
        return "", ""
    return parts[0].lower(), parts[1] if len(parts) > 1 else ""


def _ints(text):
    """Integers separated by spaces or commas, or None if any token is not an integer."""
    try:
        return [int(token) for token in text.replace(",", " ").split()]
    except ValueError:
        return None


class HiddenRecurrenceEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "train",
        "skill": "sequence induction",
        "difficulty": "medium",
        "hint": "Request four consecutive terms. Each term after the second gives one linear "
        "equation in P and Q, so two equations fix both; solve them, then confirm the rule on "
        "a fifth term if turns allow. Extend the sequence one term at a time to the requested "
        "index, keeping signs carefully.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.ps, self.qs, self.starts, self.targets, self.visible, self.given, turns = LEVELS[
            self.level
        ]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        while not self._draw_sequence():
            pass
        self.seen = {k: self.terms[k] for k in range(self.given)}
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        given = "".join(f"a({k}) = {v}. " for k, v in self.seen.items())
        obs = (
            "A hidden integer sequence obeys a(n) = P*a(n-1) + Q*a(n-2) for n >= 2, with "
            f"nonzero integers P in [{min(self.ps)}, {max(self.ps)}] and Q in "
            f"[{min(self.qs)}, {max(self.qs)}]. {given}Commands: \\boxed{{term K}} shows "
            f"a(K) for 0 <= K <= {self.visible - 1}; \\boxed{{answer P Q V}} submits P, Q and "
            f"V = a({self.target}) and ends the episode. You have {self.max_turns} turns."
        )
        return obs, {"target_index": self.target}

    def _draw_sequence(self):
        """Pick a rule and start; accept it if four terms identify it and values stay small."""
        rng = self._rng
        self.p = rng.choice(self.ps)
        self.q = rng.choice(self.qs)
        self.target = rng.randint(*self.targets)
        terms = [rng.randint(*self.starts), rng.randint(*self.starts)]
        while len(terms) <= self.target:
            terms.append(self.p * terms[-1] + self.q * terms[-2])
        self.terms = terms
        identifiable = terms[1] * terms[1] - terms[0] * terms[2] != 0
        return identifiable and max(abs(t) for t in terms) <= 100_000

    def _information(self):
        # Share of the four terms needed that the player requested (given terms are free).
        return min(len(self.seen) - self.given, 4 - self.given) / (4 - self.given)

    def _show(self, k):
        self.seen[k] = self.terms[k]
        self.reward = max(self.reward, 0.2 * self._information())
        return f"a({k}) = {self.terms[k]}"

    def _answer(self, guess):
        truth = (self.p, self.q, self.terms[self.target])
        correct = sum(g == t for g, t in zip(guess, truth, strict=True))
        if correct == 3:
            self.reward = 1.0
            return "Correct! Rule and extrapolated term are both right."
        self.reward = 0.2 * self._information() + 0.6 * correct / 3
        return f"Wrong: {correct} of 3 values right (P={truth[0]}, Q={truth[1]}, V={truth[2]})."

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        verb, rest = _command(action)
        args = _ints(rest)
        done = False
        if verb == "term" and args and len(args) == 1 and 0 <= args[0] < self.visible:
            obs = self._show(args[0])
        elif verb == "answer" and args and len(args) == 3:
            obs, done = self._answer(args), True
        else:
            obs = (
                f"Invalid action. Use \\boxed{{term K}} with 0 <= K <= {self.visible - 1}, or "
                "\\boxed{answer P Q V}."
            )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "terms_seen": len(self.seen)}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        queries = [f"\\boxed{{term {k}}}" for k in range(self.given, 4)]
        return queries + [f"\\boxed{{answer {self.p} {self.q} {self.terms[self.target]}}}"]

    def close(self):
        pass
