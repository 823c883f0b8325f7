"""Env sources used by the tests: a good text env, a good tool-use env, and broken variants.

Each broken variant breaks exactly one rule of the contract, so a test can assert that the
validator names exactly that check.
"""

GOOD_TEXT = '''
import random, re

class LockEnv:
    """Open a 3-digit lock: each guess tells how many digits are right."""
    metadata = {"kind": "game", "skill": "deduction", "difficulty": "easy",
                "hint": "Change one digit at a time and watch the count."}

    def __init__(self, max_turns=40):
        self.max_turns = max_turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.code = [rng.randint(0, 9) for _ in range(3)]
        self.turns = 0
        return "Guess the 3-digit code as \\\\boxed{123}.", {}

    def step(self, action):
        self.turns += 1
        m = re.search(r"\\\\boxed\\{(\\d{3})\\}", action)
        if not m:
            return "Invalid guess.", 0.0, False, self.turns >= self.max_turns, {}
        guess = [int(c) for c in m.group(1)]
        right = sum(g == c for g, c in zip(guess, self.code))
        if right == 3:
            return "Open!", 1.0, True, False, {}
        return f"{right} digits right.", right / 4, False, self.turns >= self.max_turns, {}

    def solution(self):
        code = "".join(map(str, self.code))
        return ["\\\\boxed{000}", f"\\\\boxed{{{code}}}"]

    def close(self):
        pass
'''

GOOD_TOOL = '''
import json, random

class BankEnv:
    """Pay the bill shown by list_bills from the right account."""
    metadata = {"kind": "tool_use", "skill": "bookkeeping", "difficulty": "easy",
                "hint": "Look up the bills before paying."}
    tools = [
        {"type": "function", "function": {"name": "list_bills", "description": "Unpaid bills.",
         "parameters": {"type": "object", "properties": {}}}},
        {"type": "function", "function": {"name": "pay", "description": "Pay a bill.",
         "parameters": {"type": "object", "properties": {"bill_id": {"type": "string"}},
                        "required": ["bill_id"]}}},
        {"type": "function", "function": {"name": "balance", "description": "Balance.",
         "parameters": {"type": "object", "properties": {}}}},
    ]

    def __init__(self, max_turns=10):
        self.max_turns = max_turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.bill = f"B{rng.randint(100, 999)}"
        self.paid = False
        self.turns = 0
        return "Pay your unpaid bill. Call tools as JSON.", {}

    def step(self, action):
        self.turns += 1
        done = self.turns >= self.max_turns
        try:
            call = json.loads(action)
            name, args = call["name"], call.get("arguments", {})
        except Exception:
            return "Error: action must be a JSON tool call.", 0.0, False, done, {}
        if name == "list_bills":
            return json.dumps([self.bill]), 0.0, False, done, {}
        if name == "balance":
            return "100", 0.0, False, done, {}
        if name == "pay" and isinstance(args, dict) and args.get("bill_id") == self.bill:
            return "Paid.", 1.0, True, False, {}
        return "Error: unknown tool or bill.", 0.0, False, done, {}

    def solution(self):
        return [json.dumps({"name": "list_bills", "arguments": {}}),
                json.dumps({"name": "pay", "arguments": {"bill_id": self.bill}})]

    def close(self):
        pass
'''


def broken(old: str, new: str, base: str = GOOD_TEXT) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


# One guess and the episode is over, right or wrong: a quiz (its one-action solution is below).
QUIZ = broken("right / 4, False,", "right / 4, True,")
QUIZ = broken('"Invalid guess.", 0.0, False,', '"Invalid guess.", 0.0, True,', QUIZ)

# check name -> source that fails exactly there
BROKEN = {
    "loads": broken("import random, re", "import random, re\ndef oops(:\n    pass"),
    "single_env_class": GOOD_TEXT + "\nclass OtherEnv(LockEnv):\n    pass\n",
    "constructs": broken("self.max_turns = max_turns", "raise RuntimeError('no')"),
    "tool_schemas": broken(
        '"type": "object", "properties": {}}}},\n        {"type": "function", '
        '"function": {"name": "pay"',
        '"type": "array"}}},\n        {"type": "function", "function": {"name": "pay"',
        GOOD_TOOL,
    ),
    "reset_returns_text": broken(
        'return "Guess the 3-digit', 'return 42, {}  # "Guess the 3-digit'
    ),
    "solution_returns_actions": broken(
        'return ["\\\\boxed{000}"', 'return []  # ["\\\\boxed{000}"'
    ),
    "step_types": broken('"Open!", 1.0', '"Open!", 1.5'),
    "invalid_action_handled": broken(
        'return "Invalid guess."',
        'raise ValueError("bad guess")\n            return "Invalid guess."',
    ),
    "solution_solves": broken(
        'f"\\\\boxed{{{code}}}"', 'f"\\\\boxed{{{(int(code) + 1) % 1000:03d}}}"'
    ),
    # A 64-bit draw too: the 3-digit code alone repeats by chance once in a thousand runs.
    "deterministic": broken(
        "rng = random.Random(seed)", "rng = random.Random()\n        self.tag = rng.getrandbits(64)"
    ),
    "ends_within_max_turns": broken(
        "self.turns >= self.max_turns, {}\n        guess", "False, {}\n        guess"
    ),
    "multi_turn": broken('return ["\\\\boxed{000}", ', "return [", QUIZ),
}

# A privileged one-action solution (it knows the code), but wrong guesses get feedback and the
# episode goes on: multi-turn for a player who does not know the code.
ORACLE_LOCK = broken('return ["\\\\boxed{000}", ', "return [")

# The lock with a difficulty knob: level 0 has one digit and 4 turns, the top level (the
# default) three digits and 40 turns.
LEVELLED_TEXT = broken(
    """    def __init__(self, max_turns=40):
        self.max_turns = max_turns

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.code = [rng.randint(0, 9) for _ in range(3)]""",
    """    difficulty_levels = 3

    def __init__(self):
        self.max_turns = 40

    def reset(self, seed=None, options=None):
        level = (options or {}).get("difficulty", 2)
        self.max_turns = (4, 12, 40)[level]
        rng = random.Random(seed)
        self.code = [rng.randint(0, 9) for _ in range(level + 1)]""",
)
LEVELLED_TEXT = broken("(\\d{3})", "(\\d+)", LEVELLED_TEXT)
LEVELLED_TEXT = broken('return "Guess the 3-digit code as \\\\boxed{123}.", {}',
                       'return f"Guess the {len(self.code)}-digit code as \\\\boxed{{123}}.", {}',
                       LEVELLED_TEXT)  # fmt: skip
LEVELLED_TEXT = broken("if right == 3:", "if right == len(self.code) == len(guess):",
                       LEVELLED_TEXT)  # fmt: skip
# The first guess is wrong in every digit, whatever the code (a one-digit code may be 0).
LEVELLED_TEXT = broken(
    'return ["\\\\boxed{000}", ',
    'return ["\\\\boxed{" + "".join(str((c + 1) % 10) for c in self.code) + "}", ',
    LEVELLED_TEXT,
)

# Levels declared but ignored: every level is the same task.
IGNORED_LEVELS = broken("[rng.randint(0, 9) for _ in range(level + 1)]",
                        "[rng.randint(0, 9) for _ in range(3)]", LEVELLED_TEXT)  # fmt: skip
# Without a difficulty the env plays its easiest level, not its top one.
DEFAULT_NOT_TOP = broken('get("difficulty", 2)', 'get("difficulty", 0)', LEVELLED_TEXT)
# Pays for anything: an unreadable guess earns 0.6, so repeating "" scores 0.6.
PAYS_FOR_NOTHING = broken('"Invalid guess.", 0.0, False,', '"Invalid guess.", 0.6, False,')
# Solved by saying nothing: the first unreadable guess opens the lock.
SOLVED_BY_NOTHING = broken('return "Invalid guess.", 0.0, False, self.turns >= self.max_turns, {}',
                           'return "Open!", 1.0, True, False, {}')  # fmt: skip
