"""Identify a hidden Boolean function of four variables from its truth table, then write a formula.

Teaches logic: query the rows of the truth table, then synthesise an equivalent formula
(for example a sum of products built from the rows where the function is 1, simplified by
merging rows that differ in a single variable). Difficulty levels change the number of
variables (two at level 0, four at the top), the size of the hidden formula and the spare turns.
"""

import itertools
import random
import re

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_VARS = "abcd"
_ROWS = list(itertools.product((0, 1), repeat=len(_VARS)))
_TOKEN = re.compile(r"\s*(\(|\)|[a-z]+|[01]|[&|^~!])")
_SYMBOLS = {"&": "and", "|": "or", "^": "xor", "~": "not", "!": "not"}
# The example formula shown to the agent, by number of variables.
_EXAMPLES = {
    2: "(a and not b) or (a xor b)",
    3: "(a and not c) or (b xor c)",
    4: "(a and not c) or (b xor d)",
}

# Difficulty levels: (variables, AND-terms, literals per term, least relevant variables,
# range of ones in the table, turn budget). The top level is the original task.
LEVELS = [
    ("ab", (1, 2), (1, 2), 2, (1, 3), 6),
    ("abc", (1, 2), (2, 2), 2, (2, 6), 10),
    ("abc", (2, 3), (2, 3), 3, (2, 6), 9),
    ("abcd", (2, 2), (2, 3), 3, (4, 12), 18),
    ("abcd", (2, 3), (2, 3), 3, (4, 12), 20),
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


def _tokenize(text):
    tokens, pos, text = [], 0, text.lower().strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise ValueError(f"unexpected character {text[pos]!r}")
        tokens.append(_SYMBOLS.get(match.group(1), match.group(1)))
        pos = match.end()
    return tokens


class _Parser:
    """Recursive descent: not binds tightest, then and, then xor, then or."""

    def __init__(self, tokens, variables=_VARS):
        self.tokens, self.pos, self.variables = tokens, 0, variables

    def parse(self):
        tree = self._binary(("or", "xor", "and"))
        if self.pos != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[self.pos]!r}")
        return tree

    def _peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self):
        token = self._peek()
        if token is None:
            raise ValueError("formula ends too early")
        self.pos += 1
        return token

    def _binary(self, levels):
        if not levels:
            return self._unary()
        tree = self._binary(levels[1:])
        while self._peek() == levels[0]:
            self._take()
            tree = (levels[0], tree, self._binary(levels[1:]))
        return tree

    def _unary(self):
        token = self._take()
        if token == "not":
            return ("not", self._unary())
        if token == "(":
            tree = self._binary(("or", "xor", "and"))
            if self._take() != ")":
                raise ValueError("missing ')'")
            return tree
        if token in ("0", "1") or (len(token) == 1 and token in self.variables):
            return token
        raise ValueError(f"unexpected {token!r}")


def _evaluate(tree, row, variables=_VARS):
    if isinstance(tree, str):
        return int(tree) if tree in "01" else row[variables.index(tree)]
    if tree[0] == "not":
        return 1 - _evaluate(tree[1], row, variables)
    left, right = _evaluate(tree[1], row, variables), _evaluate(tree[2], row, variables)
    return {"and": left & right, "or": left | right, "xor": left ^ right}[tree[0]]


def _rows(variables):
    return list(itertools.product((0, 1), repeat=len(variables)))


def _relevant_count(table, n):
    """How many of the n variables the function really depends on."""
    count = 0
    for i in range(n):
        mask = 1 << (n - 1 - i)  # flipping variable i flips this bit of the row index
        count += any(table[r] != table[r ^ mask] for r in range(len(table)))
    return count


def _truth_table(text, variables=_VARS):
    tree = _Parser(_tokenize(text), variables).parse()
    return tuple(_evaluate(tree, row, variables) for row in _rows(variables))


class BooleanFunctionEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "reasoning",
        "split": "train",
        "skill": "logic",
        "difficulty": "medium",
        "hint": "Nothing is promised about the function's shape, so query all sixteen rows "
        "in a systematic order. Then list the rows where f is 1, group rows that differ in "
        "exactly one variable (that variable drops out of the term), and OR the resulting "
        "AND-terms. Before submitting, check the formula against every row you queried.",
    }

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.vars, self.n_terms, self.n_literals, self.min_relevant, self.n_ones, turns = LEVELS[
            self.level
        ]
        self.max_turns = self._turns_given or turns
        self.rows = _rows(self.vars)
        self._rng = random.Random(seed)
        self.formula, self.table = self._random_function()
        self.queried = set()
        self.turns = 0
        self.ended = None
        self.reward = 0.0
        names = ", ".join(self.vars)
        bits = "1011"[: len(self.vars)]
        shown = ", ".join(f"{v}={b}" for v, b in zip(self.vars, bits, strict=True))
        obs = (
            f"A hidden Boolean function f({names}) returns 0 or 1. Commands: "
            f"\\boxed{{query {bits}}} shows f({shown}); \\boxed{{answer FORMULA}} submits "
            f"an equivalent formula over {names}, 0, 1 with and, or, xor, not and "
            f"parentheses, e.g. \\boxed{{answer {_EXAMPLES[len(self.vars)]}}}, and ends the "
            f"episode. You have {self.max_turns} turns."
        )
        return obs, {"variables": list(_VARS)}

    def _random_function(self):
        """An OR of AND-terms with the level's sizes (at the top: 2-3 terms of 2-3 literals,
        depending on at least three variables, 4-12 ones)."""
        while True:
            terms = []
            for _ in range(self._rng.randint(*self.n_terms)):
                names = sorted(self._rng.sample(self.vars, self._rng.randint(*self.n_literals)))
                terms.append(" and ".join(self._rng.choice(["", "not "]) + v for v in names))
            formula = " or ".join(f"({term})" for term in terms)
            table = _truth_table(formula, self.vars)
            ones_low, ones_high = self.n_ones
            if (
                _relevant_count(table, len(self.vars)) >= self.min_relevant
                and ones_low <= sum(table) <= ones_high
            ):
                return formula, table

    def _query(self, bits):
        row = tuple(int(b) for b in bits)
        self.queried.add(row)
        self.reward = max(self.reward, 0.2 * len(self.queried) / len(self.rows))
        assignment = ", ".join(f"{v}={b}" for v, b in zip(self.vars, bits, strict=True))
        return f"f({assignment}) = {self.table[self.rows.index(row)]}"

    def _answer(self, table):
        if table == self.table:
            self.reward = 1.0
            return f"Correct! Your formula matches f on all {len(self.rows)} rows."
        matches = sum(x == y for x, y in zip(table, self.table, strict=True))
        # Credit only agreement beyond what the best constant formula would get.
        baseline = max(sum(self.table), len(self.rows) - sum(self.table))
        skill = max(0.0, (matches - baseline) / (len(self.rows) - baseline))
        self.reward = 0.2 * len(self.queried) / len(self.rows) + 0.7 * skill
        return f"Wrong: your formula agrees with f on {matches} of {len(self.rows)} rows."

    def step(self, action):
        if self.ended:  # stepping after the end changes nothing
            return "The episode is over.", round(self.reward, 4), *self.ended, {"turn": self.turns}
        self.turns += 1
        verb, rest = _command(action)
        done = False
        bits = re.sub(r"[\s,]", "", rest)
        if verb == "query" and len(bits) == len(self.vars) and set(bits) <= {"0", "1"}:
            obs = self._query(bits)
        elif verb == "answer":
            try:
                obs, done = self._answer(_truth_table(rest, self.vars)), True
            except (ValueError, RecursionError) as error:
                obs = f"Invalid formula ({error}); nothing was submitted."
        else:
            obs = "Invalid action. Use \\boxed{query 0110} or \\boxed{answer FORMULA}."
        # Out of the stated budget: the episode ends (terminated) with the progress earned.
        done = done or self.turns >= self.max_turns
        self.ended = (done, False) if done else None
        info = {"turn": self.turns, "rows_queried": len(self.queried)}
        return obs, round(self.reward, 4), done, False, info

    def solution(self):
        queries = ["\\boxed{query " + "".join(map(str, row)) + "}" for row in self.rows]
        return queries + [f"\\boxed{{answer {self.formula}}}"]

    def close(self):
        pass
