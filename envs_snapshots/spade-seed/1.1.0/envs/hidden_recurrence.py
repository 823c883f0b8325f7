"""Infer a hidden second-order linear recurrence from terms you request, then extrapolate it.

The sequence obeys a(n) = P*a(n-1) + Q*a(n-2). Only the early terms can be requested, so
the agent must recover P and Q from a few consecutive terms (two linear equations) and then
run the recurrence forward to a term it cannot see. Teaches sequence induction.
"""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_VISIBLE = 8  # terms a(0) .. a(7) may be requested


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

    def __init__(self, max_turns: int = 8):
        self.max_turns = max_turns
        self._rng = random.Random()

    def reset(self, seed=None):
        self._rng = random.Random(seed)
        while not self._draw_sequence():
            pass
        self.seen = {}
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        obs = (
            "A hidden integer sequence obeys a(n) = P*a(n-1) + Q*a(n-2) for n >= 2, with "
            "nonzero integers P in [-3, 3] and Q in [-2, 2]. Commands: \\boxed{term K} shows "
            f"a(K) for 0 <= K <= {_VISIBLE - 1}; \\boxed{{answer P Q V}} submits P, Q and "
            f"V = a({self.target}) and ends the episode. You have {self.max_turns} turns."
        )
        return obs, {"target_index": self.target}

    def _draw_sequence(self):
        """Pick a rule and start; accept it if four terms identify it and values stay small."""
        rng = self._rng
        self.p = rng.choice([-3, -2, -1, 1, 2, 3])
        self.q = rng.choice([-2, -1, 1, 2])
        self.target = rng.randint(9, 11)
        terms = [rng.randint(-5, 5), rng.randint(-5, 5)]
        while len(terms) <= self.target:
            terms.append(self.p * terms[-1] + self.q * terms[-2])
        self.terms = terms
        identifiable = terms[1] * terms[1] - terms[0] * terms[2] != 0
        return identifiable and max(abs(t) for t in terms) <= 100_000

    def _information(self):
        return min(len(self.seen), 4) / 4

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
        if verb == "term" and args and len(args) == 1 and 0 <= args[0] < _VISIBLE:
            obs = self._show(args[0])
        elif verb == "answer" and args and len(args) == 3:
            obs, done = self._answer(args), True
        else:
            obs = (
                f"Invalid action. Use \\boxed{{term K}} with 0 <= K <= {_VISIBLE - 1}, or "
                "\\boxed{answer P Q V}."
            )
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "terms_seen": len(self.seen)}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        queries = [f"\\boxed{{term {k}}}" for k in range(4)]
        return queries + [f"\\boxed{{answer {self.p} {self.q} {self.terms[self.target]}}}"]

    def close(self):
        pass
