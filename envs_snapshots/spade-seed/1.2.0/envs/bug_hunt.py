"""Find inputs that expose each of the two bugs hidden in a short function shown next to its spec.

The agent reads the code, may run it on inputs of its choice (seeing only the buggy output),
and reports inputs where it breaks the spec. Both bugs trigger on only a few inputs, so
random testing rarely finds them: the agent has to compare the code with the spec and aim at
boundaries and special cases. Teaches debugging. Difficulty levels hide one bug instead of
two below level 2 and draw the code from fewer kinds of function below the top.
"""

import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


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


# Each task builder returns the spec, the buggy code, the argument ranges, a function
# run(args, bugs) that behaves as the code with only the bugs in `bugs` present, and the
# candidate inputs the reference solution searches. Bugs not in `present` are written
# correctly in the code (the env also drops them from `bugs`).

_LEAP_BUGS = [
    ("year % 4 == 0 and year % 100 != 0", lambda y: y % 4 == 0 and y % 100 != 0),
    ("year % 4 == 0", lambda y: y % 4 == 0),
    (
        "year % 4 == 0 and (year % 100 != 0 or year % 40 == 0)",
        lambda y: y % 4 == 0 and (y % 100 != 0 or y % 40 == 0),
    ),
]


def _is_leap(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _calendar_task(rng, present=(0, 1)):
    leap_text, buggy_leap = rng.choice(_LEAP_BUGS)
    thirty = [4, 6, 9, 11]
    wrong = list(thirty)
    removed = rng.randrange(4)
    if rng.random() < 0.5:
        del wrong[removed]
    else:
        wrong[removed] = rng.choice([1, 3, 5, 7, 8, 10, 12])
    wrong.sort()
    if 0 not in present:
        leap_text = "year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)"
    if 1 not in present:
        wrong = thirty

    def run(args, bugs):
        year, month = args
        if month == 2:
            leap = buggy_leap(year) if 0 in bugs else _is_leap(year)
            return 29 if leap else 28
        return 30 if month in (wrong if 1 in bugs else thirty) else 31

    code = (
        "def days_in_month(year, month):\n"
        "    if month == 2:\n"
        f"        leap = {leap_text}\n"
        "        return 29 if leap else 28\n"
        f"    if month in {tuple(wrong)}:\n"
        "        return 30\n"
        "    return 31"
    )
    spec = (
        "days_in_month(year, month) returns the number of days in that month of the "
        "Gregorian calendar."
    )
    years = [2023, 2024, 1900, 2000, 2100, 2200, 2400]
    candidates = [(y, m) for y in years for m in range(1, 13)]
    return spec, code, [("year", 1, 9999), ("month", 1, 12)], run, candidates


def _grade_task(rng, present=(0, 1)):
    base = rng.choice([50, 55, 60, 65])
    cutoffs = [base + 30, base + 20, base + 10, base]
    letters = "ABCD"
    strict, typo = rng.sample(range(4), 2)
    shifted = cutoffs[typo] + rng.choice([-3, -2, -1, 1, 2, 3])

    def run(args, bugs):
        (score,) = args
        for i, letter in enumerate(letters):
            cutoff = shifted if (1 in bugs and i == typo) else cutoffs[i]
            passed = score > cutoff if (0 in bugs and i == strict) else score >= cutoff
            if passed:
                return letter
        return "F"

    lines = ["def letter_grade(score):"]
    for i, letter in enumerate(letters):
        op = ">" if i == strict and 0 in present else ">="
        cutoff = shifted if i == typo and 1 in present else cutoffs[i]
        lines += [f"    if score {op} {cutoff}:", f'        return "{letter}"']
    code = "\n".join(lines + ['    return "F"'])
    bands = ", ".join(f"{g} from {c}" for g, c in zip(letters, cutoffs, strict=True))
    spec = f"letter_grade(score) maps a score 0-100 to a grade: {bands}, F below {base}."
    return spec, code, [("score", 0, 100)], run, [(s,) for s in range(101)]


_PRIME_GUARDS = {"n < 1": lambda n: n < 1, "n == 0": lambda n: n == 0, "n <= 2": lambda n: n <= 2}
_PRIME_BOUNDS = {"int(n ** 0.5)": lambda n: int(n**0.5), "round(n ** 0.5)": lambda n: round(n**0.5)}


def _prime_task(rng, present=(0, 1)):
    guard = rng.choice(sorted(_PRIME_GUARDS))
    bound = rng.choice(sorted(_PRIME_BOUNDS))
    guard_text = guard if 1 in present else "n < 2"
    bound_text = bound if 0 in present else "int(n ** 0.5) + 1"

    def run(args, bugs):
        (n,) = args
        if _PRIME_GUARDS[guard](n) if 1 in bugs else n < 2:
            return False
        top = _PRIME_BOUNDS[bound](n) if 0 in bugs else int(n**0.5) + 1
        return all(n % d for d in range(2, top))

    code = (
        "def is_prime(n):\n"
        f"    if {guard_text}:\n"
        "        return False\n"
        f"    for d in range(2, {bound_text}):\n"
        "        if n % d == 0:\n"
        "            return False\n"
        "    return True"
    )
    spec = "is_prime(n) returns True when n is a prime number and False otherwise."
    return spec, code, [("n", 1, 10**6)], run, [(n,) for n in range(1, 200)]


# Calendar and grade tasks have many variants; the prime task has few, so it is drawn less.
_TASKS = [_calendar_task, _calendar_task, _grade_task, _grade_task, _prime_task]

# Difficulty levels: (number of bugs, task pool, turn budget). The top level is the original
# task.
LEVELS = [
    (1, [_grade_task], 4),
    (1, [_calendar_task, _grade_task], 5),
    (2, [_grade_task], 8),
    (2, [_calendar_task, _grade_task], 10),
    (2, _TASKS, 12),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


class BugHuntEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "train",
        "skill": "debugging",
        "difficulty": "hard",
        "hint": "Read the code line by line against the spec before testing. Bugs hide at "
        "boundaries: comparisons that should include the boundary value, constants that "
        "differ slightly from the spec, and rare special cases the spec covers but the code "
        "forgets. Work out by hand what the spec demands for a suspicious input, test it, "
        "and report it only when the output disagrees.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        n_bugs, tasks, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        # With one bug, which of the task's two it is is drawn first (the top draws nothing).
        self.present = (0, 1) if n_bugs == 2 else (self._rng.randrange(2),)
        builder = self._rng.choice(tasks)
        self.spec, self.code, self.params, run, self._candidates = builder(self._rng, self.present)
        self._run = lambda args, bugs: run(args, set(bugs) & set(self.present))
        self.found = set()
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        names = " ".join(name.upper() for name, _, _ in self.params)
        ranges = ", ".join(f"{name} in [{lo}, {hi}]" for name, lo, hi in self.params)
        bugs = "exactly two independent bugs" if len(self.present) == 2 else "exactly one bug"
        obs = (
            f"Spec: {self.spec}\nCode (it contains {bugs}):\n"
            f"{self.code}\nInputs: {ranges}. Commands: \\boxed{{test {names}}} runs the code; "
            f"\\boxed{{report {names}}} claims the code breaks the spec on that input. Find "
            f"an input exposing {'each bug' if len(self.present) == 2 else 'the bug'}. "
            f"You have {self.max_turns} turns."
        )
        return obs, {"arguments": [name for name, _, _ in self.params]}

    def _parse_args(self, text):
        args = _ints(text)
        if args is None or len(args) != len(self.params):
            return None
        if any(not lo <= a <= hi for a, (_, lo, hi) in zip(args, self.params, strict=True)):
            return None
        return tuple(args)

    def _exposed(self, args):
        """Bugs whose presence alone breaks the spec on args (and the full code breaks too)."""
        expected = self._run(args, set())
        if self._run(args, {0, 1}) == expected:
            return set()
        return {bug for bug in (0, 1) if self._run(args, {bug}) != expected}

    def _report(self, args):
        exposed = self._exposed(args)
        call = f"f({', '.join(map(str, args))})"
        if not exposed:
            return f"No discrepancy: {call} = {self._run(args, set())!r} agrees with the spec."
        new = exposed - self.found
        self.found |= exposed
        got, want = self._run(args, {0, 1}), self._run(args, set())
        verdict = "New bug exposed" if new else "That bug was already found"
        return (
            f"{verdict}: {call} returned {got!r} but the spec requires {want!r}. "
            f"Bugs found: {len(self.found)} of {len(self.present)}."
        )

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        verb, rest = _command(action)
        args = self._parse_args(rest)
        if args is not None and verb == "test":
            obs = f"The code returns {self._run(args, {0, 1})!r}."
        elif args is not None and verb == "report":
            obs = self._report(args)
        else:
            names = " ".join(name.upper() for name, _, _ in self.params)
            obs = (
                f"Invalid action. Use \\boxed{{test {names}}} or \\boxed{{report {names}}} "
                "with integers in range."
            )
        done = len(self.found) == len(self.present)
        self.reward = 1.0 if done else 0.5 * len(self.found)
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "bugs_found": len(self.found)}
        return obs, self.reward, done, False, info

    def solution(self):
        actions, found = [], set()
        for bug in self.present:
            if bug in found:
                continue
            args = next(a for a in self._candidates if bug in self._exposed(a))
            found |= self._exposed(args)
            text = " ".join(map(str, args))
            actions += [f"\\boxed{{test {text}}}", f"\\boxed{{report {text}}}"]
        return actions

    def close(self):
        pass
