"""Serve a library member at the desk: returns and late fees first, then loans and holds.

Teaches following a procedure whose preconditions are hidden in the records: which loans are
overdue (due dates must be compared with today), what is owed after late fees, the exact
catalogue entries behind requested titles, and which of them can be borrowed or only held.
Lower difficulty levels have fewer requests and loans, a stated turn budget, and at the lowest
two the intro already shows the member record and the requested books' catalogue entries.
"""

import datetime
import json
import math
import random

_TYPES = {"string": str, "integer": int, "number": (int, float)}
# fmt: off
_ADJECTIVES = ["Silent", "Hidden", "Golden", "Broken", "Last", "Distant", "Crimson", "Quiet",
               "Winter", "Paper", "Iron", "Velvet"]
_NOUNS = ["Harbor", "Garden", "Orchard", "Compass", "Lantern", "River", "Mountain", "Archive",
          "Bridge", "Forest", "Island", "Clockmaker"]
_AUTHORS = ["A. Lindqvist", "B. Okoro", "C. Marchetti", "D. Nakamura", "E. Byrne", "F. Haddad",
            "G. Sousa", "H. Novak", "I. Petrov", "J. Mensah"]
# fmt: on
_MEMBERS = ["Jane Doe", "Omar Farouk", "Lucia Gomez", "Pieter de Vries", "Mei Chen"]
_LATE_FEE = 25  # cents per day overdue
# Difficulty levels: ranges of (requested titles, requests without a free copy, current loans,
# overdue loans), whether the intro shows the member record and catalogue entries, and the
# turn budget. The top level is the original task; level 0 is a 3-call episode.
LEVELS = [
    ((1, 1), (0, 0), (1, 1), (0, 0), True, 5),
    ((2, 2), (1, 1), (2, 2), (1, 1), True, 8),
    ((2, 3), (1, 1), (2, 3), (1, 1), False, 16),
    ((3, 3), (1, 2), (3, 4), (1, 2), False, 25),
    ((3, 4), (1, 2), (3, 4), (1, 2), False, 35),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def _money(cents):
    return f"${cents // 100}.{cents % 100:02d}"


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


class LibraryLoansEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "train",
        "skill": "procedure following",
        "difficulty": "medium",
        "hint": "Open the member record first and compare every due date with today's date to "
        "find the overdue loans. Return those, then re-read the record to see the fine including "
        "the new late fees, and pay exactly that. Look each requested title up and pick the "
        "entry whose title matches exactly; borrow it if a copy is free, otherwise place a hold.",
    }
    tools = [
        _tool(
            "search_catalog",
            "Search books by words in the title or author.",
            query=("string", "Words to look for."),
        ),
        _tool(
            "get_member",
            "Show a member's loans with due dates, holds, fines and loan limit.",
            member_id=("string", "e.g. 'M-4821'."),
        ),
        _tool(
            "return_book",
            "Check in a book the member has handed back.",
            member_id=("string", "The member id."),
            book_id=("string", "e.g. 'BK-1234'."),
        ),
        _tool(
            "pay_fine",
            "Take a payment towards the member's unpaid fines.",
            member_id=("string", "The member id."),
            amount=("number", "Dollars, e.g. 3.25."),
        ),
        _tool(
            "checkout",
            "Lend a book to the member.",
            member_id=("string", "The member id."),
            book_id=("string", "The book id."),
        ),
        _tool(
            "place_hold",
            "Reserve a book that has no free copy for the member.",
            member_id=("string", "The member id."),
            book_id=("string", "The book id."),
        ),
        _tool("finish", "Declare the member served; this ends the episode."),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.level = _level(options)
        *self.counts, self.shown, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        rng = self._rng
        self.today = datetime.date(2024, 1, 1) + datetime.timedelta(days=rng.randrange(366))
        self.member_id, self.member_name = f"M-{rng.randint(1000, 9999)}", rng.choice(_MEMBERS)
        self._make_catalog()
        self._make_member()
        self.turns, self.finished, self.solved = 0, False, False
        wanted = "; ".join(f"'{self.books[b]['title']}'" for b in self.requests)
        intro = (
            f"Today is {self.today.isoformat()}. {self.member_name} (member {self.member_id}) "
            "is at the desk and has handed back every overdue book they hold (and only "
            f"those). They would like to borrow: {wanted}. Policy: a member with overdue "
            "loans or unpaid fines cannot borrow; each overdue book adds a late fee of "
            f"{_money(_LATE_FEE)} per day overdue when returned; a member may not exceed "
            "their loan limit; if no copy of a wanted book is free, place a hold on it. "
            "Tools: search_catalog, get_member, return_book, pay_fine, checkout, "
            "place_hold, finish. Call finish when done; the episode ends then."
        )
        if self.level < len(LEVELS) - 1:
            intro += f" You have {self.max_turns} tool calls."
        if self.shown:
            intro += f"\nMember record: {self._do_get_member(self.member_id)}\nCatalogue:"
            intro += "".join(f"\n{self._book_line(b)}" for b in self.requests)
        return intro, {"requests": len(self.requests)}

    def _make_catalog(self):
        """Requested titles, a look-alike for each, and a few of the member's current loans."""
        rng = self._rng
        pairs = zip(rng.sample(_ADJECTIVES, 8), rng.sample(_NOUNS, 8), strict=True)
        names = [f"The {adjective} {noun}" for adjective, noun in pairs]
        names += [f"Return to {title[4:]}" for title in names[:4]]  # look-alikes
        ids = [f"BK-{n}" for n in rng.sample(range(1000, 10000), len(names))]
        self.books = {}
        for book_id, title in zip(ids, names, strict=True):
            copies = rng.randint(1, 3)
            self.books[book_id] = {
                "title": title,
                "author": rng.choice(_AUTHORS),
                "copies": copies,
                "free": rng.randint(0, copies),
            }
        requests, unavailable = self.counts[:2]
        self.requests = ids[: rng.randint(*requests)]
        self.unavailable = set(rng.sample(self.requests, rng.randint(*unavailable)))
        for book_id in self.requests:
            book = self.books[book_id]
            book["free"] = 0 if book_id in self.unavailable else max(1, book["free"])

    def _make_member(self):
        rng = self._rng
        loans, overdue = self.counts[2:]
        on_loan = list(self.books)[4 : 4 + rng.randint(*loans)]  # never a requested title
        self.overdue = sorted(rng.sample(on_loan, rng.randint(*overdue)))
        self.loans = {}
        for book_id in on_loan:
            shift = -rng.randint(2, 30) if book_id in self.overdue else rng.randint(0, 14)
            self.loans[book_id] = self.today + datetime.timedelta(days=shift)
            book = self.books[book_id]
            book["free"] = min(book["free"], book["copies"] - 1)  # the member holds one copy
        self.returned = set()
        self.fine = rng.randint(1, 8) * 50
        self.borrowed_today, self.holds = [], []
        available = len(self.requests) - len(self.unavailable)
        self.limit = len(self.loans) - len(self.overdue) + available

    # -- helpers ---------------------------------------------------------------------------
    def _book_line(self, book_id):
        book = self.books[book_id]
        return (
            f"{book_id} '{book['title']}' by {book['author']}: {book['free']} of "
            f"{book['copies']} copies free"
        )

    def _check_member(self, member_id):
        if member_id.strip().upper() != self.member_id:
            return f"Error: no member {member_id!r} at the desk (serving {self.member_id})."
        return None

    def _find_book(self, book_id):
        book_id = book_id.strip().upper()
        return book_id if book_id in self.books else None

    # -- tools -----------------------------------------------------------------------------
    def _do_search_catalog(self, query):
        words = query.lower().split()
        hits = [
            b
            for b, book in self.books.items()
            if words and all(w in f"{book['title']} {book['author']}".lower() for w in words)
        ]
        if not hits:
            return f"No books match {query!r}."
        return "\n".join(self._book_line(b) for b in hits[:8])

    def _do_get_member(self, member_id):
        error = self._check_member(member_id)
        if error:
            return error
        loans = (
            "; ".join(
                f"{b} '{self.books[b]['title']}' due {due.isoformat()}"
                for b, due in self.loans.items()
            )
            or "none"
        )
        holds = ", ".join(self.holds) or "none"
        return (
            f"{self.member_id} {self.member_name}. Loan limit: {self.limit}. Unpaid fines: "
            f"{_money(self.fine)}. Loans: {loans}. Holds: {holds}."
        )

    def _do_return_book(self, member_id, book_id):
        error = self._check_member(member_id)
        book_id = self._find_book(book_id)
        if error or book_id is None or book_id not in self.loans:
            return error or "Error: the member has no such book on loan."
        if book_id not in self.overdue and book_id not in self.borrowed_today:
            return f"Error: {book_id} was not handed back; the member still has it."
        days_late = max(0, (self.today - self.loans.pop(book_id)).days)
        self.fine += days_late * _LATE_FEE
        self.books[book_id]["free"] += 1
        if book_id in self.borrowed_today:
            self.borrowed_today.remove(book_id)
        self.returned.add(book_id)
        return f"Returned {book_id}, {days_late} day(s) late. Fines now {_money(self.fine)}."

    def _do_pay_fine(self, member_id, amount):
        error = self._check_member(member_id)
        if error:
            return error
        if (
            not math.isfinite(amount)
            or amount <= 0
            or abs(amount * 100 - round(amount * 100)) > 1e-6
        ):
            return "Error: amount must be a positive number of dollars in whole cents."
        if round(amount * 100) > self.fine:
            return f"Error: that is more than the {_money(self.fine)} owed."
        self.fine -= round(amount * 100)
        return f"Payment taken. Fines now {_money(self.fine)}."

    def _do_checkout(self, member_id, book_id):
        error = self._check_member(member_id)
        book_id = self._find_book(book_id)
        if error or book_id is None:
            return error or "Error: no such book."
        if any(b in self.overdue for b in self.loans) or self.fine > 0:
            return "Refused: the member has overdue loans or unpaid fines."
        if len(self.loans) >= self.limit:
            return f"Refused: the member is at their loan limit of {self.limit}."
        if book_id in self.loans:
            return f"Refused: the member already has {book_id}."
        if self.books[book_id]["free"] == 0:
            return f"Refused: no free copy of {book_id}."
        self.books[book_id]["free"] -= 1
        self.loans[book_id] = self.today + datetime.timedelta(days=21)
        self.borrowed_today.append(book_id)
        return f"Lent {book_id} '{self.books[book_id]['title']}', due in 21 days."

    def _do_place_hold(self, member_id, book_id):
        error = self._check_member(member_id)
        book_id = self._find_book(book_id)
        if error or book_id is None:
            return error or "Error: no such book."
        if self.books[book_id]["free"] > 0:
            return f"Error: {book_id} has a free copy; lend it instead."
        if book_id not in self.holds:
            self.holds.append(book_id)
        return f"Hold placed on {book_id} '{self.books[book_id]['title']}'."

    def _do_finish(self):
        self.finished = True
        met = self._conditions()
        self.solved = all(met)
        if self.solved:
            return "The member leaves happy and the records are in order. Well done!"
        return f"Finished with {sum(met)} of {len(met)} desk tasks done."

    # -- goal ------------------------------------------------------------------------------
    def _conditions(self):
        """Overdue books returned, fines cleared, and every request lent or held."""
        done = [book_id in self.returned for book_id in self.overdue]
        done.append(self.fine == 0)
        for book_id in self.requests:
            done.append(
                book_id in self.holds
                if book_id in self.unavailable
                else book_id in self.borrowed_today
            )
        return done

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
        member = {"member_id": self.member_id}
        reads = [("get_member", member)]
        reads += [("search_catalog", {"query": self.books[b]["title"]}) for b in self.requests]
        calls = [] if self.shown else reads  # the intro already shows what the reads return
        calls += [("return_book", {**member, "book_id": b}) for b in self.overdue]
        owed = self.fine + sum((self.today - self.loans[b]).days * _LATE_FEE for b in self.overdue)
        calls.append(("pay_fine", {**member, "amount": owed / 100}))
        for book_id in self.requests:
            tool = "place_hold" if book_id in self.unavailable else "checkout"
            calls.append((tool, {**member, "book_id": book_id}))
        calls.append(("finish", {}))
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
