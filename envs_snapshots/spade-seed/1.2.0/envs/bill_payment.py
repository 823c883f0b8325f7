"""Pay the month's bills from a checking account that is short, topping it up from savings.

Teaches careful bookkeeping: read the balances, the bills and the account terms first, then
work out how much to move so that every payable bill clears, the disputed bill stays unpaid,
and savings (after the transfer fee) never drops below its required minimum. Lower difficulty
levels have fewer bills, a stated turn budget, and at the lowest two the intro already shows
the bills and balances.
"""

import json
import math
import random

_TYPES = {"string": str, "integer": int, "number": (int, float)}
# fmt: off
_PAYEES = ["Electric Co.", "City Water", "Fibernet Internet", "Metro Gas", "Phone Plus",
           "Home Insurance", "Oak St. Rent", "Gym Club", "Car Loan", "Streaming Plus"]
# fmt: on
_ACCOUNTS = ("checking", "savings")
# Difficulty levels: (range of the number of bills, whether the intro shows the bills and
# balances, turn budget). The top level is the original task; level 0 is a 3-call episode.
LEVELS = [
    ((2, 2), True, 5),
    ((3, 3), True, 7),
    ((3, 4), False, 12),
    ((4, 5), False, 16),
    ((4, 6), False, 20),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def _money(cents):
    return f"${cents // 100:,}.{cents % 100:02d}"


def _tool(name, description, **params):
    """An OpenAI-style function schema; each keyword is a required parameter (type, description)."""
    properties = {key: {"type": kind, "description": text} for key, (kind, text) in params.items()}
    parameters = {"type": "object", "properties": properties, "required": list(params)}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _parse_call(action, tools):
    """Check a JSON tool call against the schemas; return (name, arguments, error message)."""
    try:
        call = json.loads(action)
    except (TypeError, ValueError, RecursionError):
        call = None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None, None, 'Error: send one tool call as JSON {"name": ..., "arguments": {...}}.'
    specs = {tool["function"]["name"]: tool["function"]["parameters"] for tool in tools}
    name, args = call["name"], call.get("arguments")
    if name not in specs:
        return None, None, f"Error: unknown tool {name!r}; available: {', '.join(specs)}."
    if isinstance(args, str):  # some clients send the arguments as a JSON-encoded string
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            args = None
    args = {} if args is None and not specs[name]["required"] else args
    if not isinstance(args, dict):
        return None, None, f"Error: the arguments of {name} must be a JSON object."
    props = specs[name]["properties"]
    problems = [f"missing argument {key!r}" for key in specs[name]["required"] if key not in args]
    problems += [f"unknown argument {key!r}" for key in args if key not in props]
    problems += [
        f"argument {key!r} must be of type {props[key]['type']}"
        for key, value in args.items()
        if key in props
        and (isinstance(value, bool) or not isinstance(value, _TYPES[props[key]["type"]]))
    ]
    if problems:
        return None, None, f"Error in {name}: {'; '.join(problems)}."
    return name, args, None


class BillPaymentEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "train",
        "skill": "bookkeeping",
        "difficulty": "easy",
        "hint": "Before moving any money, read the bill list (including its notes) and both "
        "balances with their terms. Add up only the bills you are allowed to pay, compare with "
        "checking, and move the difference from savings in one transfer, checking that savings "
        "stays at or above its minimum after the fee. Then pay the bills and finish.",
    }
    tools = [
        _tool(
            "get_balance",
            "Show an account's balance and terms.",
            account=("string", "'checking' or 'savings'."),
        ),
        _tool("list_bills", "List this month's bills with amounts, status and notes."),
        _tool(
            "pay_bill",
            "Pay a bill in full from an account.",
            bill_id=("string", "e.g. 'B2'."),
            account=("string", "'checking' or 'savings'."),
        ),
        _tool(
            "transfer",
            "Move money between your own accounts.",
            from_account=("string", "'checking' or 'savings'."),
            to_account=("string", "'checking' or 'savings'."),
            amount=("number", "Dollars, e.g. 125.50."),
        ),
        _tool("finish", "Declare the bills handled; this ends the episode."),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.level = _level(options)
        counts, self.shown, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        rng = self._rng
        payees = rng.sample(_PAYEES, rng.randint(*counts))
        self.bills = {
            f"B{i + 1}": {"payee": p, "amount": rng.randint(1800, 26000), "paid": False}
            for i, p in enumerate(payees)
        }
        self.disputed = rng.choice(sorted(self.bills))
        payable = sum(b["amount"] for k, b in self.bills.items() if k != self.disputed)
        # One payable bill can be small: the lower end shrinks then (it is 2000 at the top level).
        self.shortfall = rng.randint(min(2000, (payable - 1000) // 2), min(30000, payable - 1000))
        self.fee = rng.choice([150, 250, 500])
        self.minimum = rng.choice([50000, 100000, 150000, 200000])
        self.balance = {
            "checking": payable - self.shortfall,
            "savings": self.minimum + self.shortfall + self.fee + rng.randint(0, 4000),
        }
        self.turns, self.finished, self.solved = 0, False, False
        intro = (
            "Pay all of this month's bills that should be paid. Bills can only be paid from "
            "checking, which may not cover them; you can transfer from savings. A declined "
            "payment changes nothing. Paying a bill you should not pay, or letting savings "
            "fall below its required minimum, fails the task at once. Tools: get_balance, "
            "list_bills, pay_bill, transfer, finish. Call finish when done; the episode "
            "ends then."
        )
        if self.level < len(LEVELS) - 1:
            intro += f" You have {self.max_turns} tool calls."
        if self.shown:
            balances = f"{self._do_get_balance('checking')} {self._do_get_balance('savings')}"
            intro += f"\nBills:\n{self._do_list_bills()}\n{balances}"
        return intro, {"bills": len(self.bills)}

    # -- tools -----------------------------------------------------------------------------
    def _do_get_balance(self, account):
        account = account.strip().lower()
        if account == "checking":
            return f"Checking balance: {_money(self.balance['checking'])}."
        if account == "savings":
            return (
                f"Savings balance: {_money(self.balance['savings'])}. Required minimum "
                f"balance: {_money(self.minimum)}. Each transfer out of savings costs a "
                f"{_money(self.fee)} fee, taken from savings."
            )
        return "Error: account must be 'checking' or 'savings'."

    def _do_list_bills(self):
        lines = []
        for bill_id, bill in self.bills.items():
            status = "paid" if bill["paid"] else "unpaid"
            note = (
                " NOTE: disputed with the provider, do not pay." if bill_id == self.disputed else ""
            )
            lines.append(f"{bill_id} {bill['payee']}: {_money(bill['amount'])}, {status}.{note}")
        return "\n".join(lines)

    def _do_pay_bill(self, bill_id, account):
        bill_id, account = bill_id.strip().upper(), account.strip().lower()
        bill = self.bills.get(bill_id)
        if bill is None:
            return f"Error: no bill {bill_id!r}."
        if account != "checking":
            return "Error: bills can only be paid from checking."
        if bill["paid"]:
            return f"{bill_id} is already paid."
        if bill["amount"] > self.balance["checking"]:
            return (
                f"Declined: {bill_id} needs {_money(bill['amount'])} but checking has "
                f"{_money(self.balance['checking'])}."
            )
        self.balance["checking"] -= bill["amount"]
        bill["paid"] = True
        if bill_id == self.disputed:
            self.finished = True
            return f"Paid {bill_id}, but it was disputed: the task has failed."
        return f"Paid {bill_id} ({_money(bill['amount'])}) from checking."

    def _do_transfer(self, from_account, to_account, amount):
        source, target = from_account.strip().lower(), to_account.strip().lower()
        if source not in _ACCOUNTS or target not in _ACCOUNTS or source == target:
            return "Error: transfer between 'checking' and 'savings' (two different accounts)."
        if (
            not math.isfinite(amount)
            or amount <= 0
            or abs(amount * 100 - round(amount * 100)) > 1e-6
        ):
            return "Error: amount must be a positive number of dollars in whole cents."
        cents = round(amount * 100)
        fee = self.fee if source == "savings" else 0
        if cents + fee > self.balance[source]:
            return f"Declined: {source} cannot cover {_money(cents)} plus fees."
        self.balance[source] -= cents + fee
        self.balance[target] += cents
        report = f"Moved {_money(cents)} from {source} to {target} (fee {_money(fee)})."
        if self.balance["savings"] < self.minimum:
            self.finished = True
            return report + " Savings is now below its required minimum: the task has failed."
        return report

    def _do_finish(self):
        self.finished = True
        met = self._conditions()
        self.solved = all(met)
        if self.solved:
            return "All payable bills are paid and every rule was kept. Well done!"
        return f"Finished with {sum(met)} of {len(met)} payable bills paid."

    # -- goal ------------------------------------------------------------------------------
    def _conditions(self):
        return [bill["paid"] for bill_id, bill in self.bills.items() if bill_id != self.disputed]

    def _reward(self):
        if self.solved:
            return 1.0
        met = self._conditions()
        return round(min(0.95, sum(met) / len(met)), 4)

    def step(self, action):
        if self.finished or self.turns >= self.max_turns:
            obs = "The episode is over."
        else:
            self.turns += 1
            name, args, error = _parse_call(action, self.tools)
            obs = error or getattr(self, f"_do_{name}")(**args)
        if self.turns >= self.max_turns and self.level < len(LEVELS) - 1:
            self.finished = True  # a stated budget: running out of it ends the episode
        truncated = not self.finished and self.turns >= self.max_turns
        return obs, self._reward(), self.finished, truncated, {"turn": self.turns}

    def solution(self):
        reads = [
            ("list_bills", {}),
            ("get_balance", {"account": "checking"}),
            ("get_balance", {"account": "savings"}),
        ]
        calls = [] if self.shown else reads  # the intro already shows what the reads return
        calls += [
            (
                "transfer",
                {
                    "from_account": "savings",
                    "to_account": "checking",
                    "amount": self.shortfall / 100,
                },
            ),
        ]
        calls += [
            ("pay_bill", {"bill_id": bill_id, "account": "checking"})
            for bill_id in self.bills
            if bill_id != self.disputed
        ]
        calls.append(("finish", {}))
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
