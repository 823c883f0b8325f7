"""Seat every evening reservation at a suitable table: a small assignment puzzle behind tools.

Teaches matching under several constraints at once: party sizes and needs are only in each
reservation's notes, tables differ in size, accessibility and location, a table that is too
big wastes seats, and two parties in the same seating cannot share a table. Greedy choices
often strand a later party, so the agent must plan the whole seating before committing.
Lower difficulty levels have fewer tables and parties, a stated turn budget, and at the lowest
two the intro already shows every table and party.
"""

import json
import random

_TYPES = {"string": str, "integer": int, "number": (int, float)}
# fmt: off
_NAMES = ["Garcia", "Nguyen", "Smith", "Kowalski", "Haddad", "Okafor", "Rossi", "Tanaka", "Dubois",
          "Larsen", "Silva", "Murphy", "Cohen", "Patel", "Schmidt", "Ivanova"]
# fmt: on
_SEATINGS = ["18:00", "20:30"]
_EXTRAS = ["Celebrating a birthday.", "Regular guests.", "First visit.", "Business dinner.", ""]
_MAX_EMPTY = 2
# Difficulty levels: (tables, tables on the patio and tables with wheelchair access, range of
# parties per seating, whether the intro shows the tables and parties, turn budget). The top
# level is the original task; level 0 is two parties seated in a 3-call episode.
LEVELS = [
    (3, 1, (1, 1), True, 5),
    (4, 1, (2, 2), True, 8),
    (5, 2, (2, 3), False, 24),
    (6, 2, (3, 5), False, 36),
    (7, 3, (5, 7), False, 50),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


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


class RestaurantSeatingEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "train",
        "skill": "assignment",
        "difficulty": "hard",
        "hint": "Read every reservation's details and the table list before seating anyone. "
        "Treat each seating time as its own matching problem: for every party list the tables "
        "that fit its size, needs and location wish, then seat the most constrained parties "
        "first and revise earlier choices when a party is left with no table.",
    }
    tools = [
        _tool("list_reservations", "List tonight's reservations (id, name, seating time)."),
        _tool(
            "get_party",
            "Show a reservation's party size and notes.",
            party_id=("string", "e.g. 'P3'."),
        ),
        _tool("list_tables", "List tables with seats and features."),
        _tool(
            "assign_table",
            "Seat a party at a table (replaces its previous table).",
            party_id=("string", "The party id."),
            table_id=("string", "e.g. 'T2'."),
        ),
        _tool(
            "unassign", "Remove a party's table assignment.", party_id=("string", "The party id.")
        ),
        _tool("finish", "Declare the seating plan final; this ends the episode."),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.n_tables, self.n_special, self.per_seating, self.shown, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        self._make_tables()
        self._make_parties()
        self.seated = {}  # party id -> table id
        self.turns, self.finished, self.solved = 0, False, False
        intro = (
            f"You run the host stand tonight: seat all {len(self.parties)} reservations "
            f"across the {' and '.join(_SEATINGS)} seatings. A table holds one party per "
            "seating. A party needs enough seats but may leave at most "
            f"{_MAX_EMPTY} seats empty; guests who use a wheelchair need an accessible "
            "table; a wish to sit on the patio or indoors must be honoured. Tools: "
            "list_reservations, get_party, list_tables, assign_table, unassign, finish. "
            "Call finish when done; the episode ends then."
        )
        if self.level < len(LEVELS) - 1:
            intro += f" You have {self.max_turns} tool calls."
        if self.shown:
            intro += f"\nTables:\n{self._do_list_tables()}\nReservations:"
            intro += "".join(f"\n{self._do_get_party(pid)}" for pid in self.parties)
        return intro, {"parties": len(self.parties)}

    def _make_tables(self):
        rng = self._rng
        count, special = self.n_tables, self.n_special
        seats = rng.sample([2, 2, 4, 4, 4, 6, 6, 8], count)
        patio = set(rng.sample(range(count), special))
        access = set(rng.sample(range(count), special))
        self.tables = {
            f"T{i + 1}": {"seats": s, "patio": i in patio, "access": i in access}
            for i, s in enumerate(seats)
        }

    def _make_parties(self):
        """Plant a valid seating (party -> table) first, then describe each party by its needs."""
        rng = self._rng
        names = iter(rng.sample(_NAMES, 14))
        planted = []
        for seating in _SEATINGS:
            for table_id in rng.sample(sorted(self.tables), rng.randint(*self.per_seating)):
                planted.append((seating, table_id, self._party_for(self.tables[table_id])))
        rng.shuffle(planted)
        self.parties, self.answer = {}, {}
        for i, (seating, table_id, needs) in enumerate(planted, start=1):
            self.parties[f"P{i}"] = {"name": next(names), "seating": seating, **needs}
            self.answer[f"P{i}"] = table_id

    def _party_for(self, table):
        rng = self._rng
        size = rng.randint(max(1, table["seats"] - _MAX_EMPTY), table["seats"])
        needs_access = table["access"] and rng.random() < 0.5
        if table["patio"]:
            wish = "patio" if rng.random() < 0.6 else "any"
        else:
            wish = "indoors" if rng.random() < 0.5 else "any"
        notes = ["One guest uses a wheelchair."] if needs_access else []
        notes += {
            "patio": ["They asked to sit outside on the patio."],
            "indoors": ["They must sit indoors (pollen allergy)."],
            "any": [],
        }[wish]
        notes.append(rng.choice(_EXTRAS))
        return {
            "size": size,
            "access": needs_access,
            "wish": wish,
            "notes": " ".join(n for n in notes if n) or "No special requests.",
        }

    # -- rules -----------------------------------------------------------------------------
    def _fits(self, party_id, table_id):
        party, table = self.parties[party_id], self.tables[table_id]
        return (
            0 <= table["seats"] - party["size"] <= _MAX_EMPTY
            and (table["access"] or not party["access"])
            and not (party["wish"] == "patio" and not table["patio"])
            and not (party["wish"] == "indoors" and table["patio"])
        )

    # -- tools -----------------------------------------------------------------------------
    def _do_list_reservations(self):
        return "\n".join(
            f"{pid} {p['name']}, {p['seating']}"
            + (f" (table {self.seated[pid]})" if pid in self.seated else "")
            for pid, p in self.parties.items()
        )

    def _do_get_party(self, party_id):
        pid = party_id.strip().upper()
        if pid not in self.parties:
            return f"Error: no reservation {party_id!r}."
        party = self.parties[pid]
        return (
            f"{pid} {party['name']}, {party['seating']}, party of {party['size']}. "
            f"Notes: {party['notes']}"
        )

    def _do_list_tables(self):
        rows = []
        for tid, t in self.tables.items():
            features = [
                ("patio" if t["patio"] else "indoors"),
                ("wheelchair accessible" if t["access"] else "not accessible"),
            ]
            rows.append(f"{tid}: {t['seats']} seats, {', '.join(features)}")
        return "\n".join(rows)

    def _do_assign_table(self, party_id, table_id):
        pid, tid = party_id.strip().upper(), table_id.strip().upper()
        if pid not in self.parties or tid not in self.tables:
            return "Error: unknown party or table id."
        seating = self.parties[pid]["seating"]
        for other, other_table in self.seated.items():
            if other != pid and other_table == tid and self.parties[other]["seating"] == seating:
                return f"Refused: {tid} already has {other} at {seating}."
        self.seated[pid] = tid
        return f"{pid} seated at {tid} for {seating}."

    def _do_unassign(self, party_id):
        pid = party_id.strip().upper()
        if self.seated.pop(pid, None) is None:
            return f"Error: {party_id!r} has no table."
        return f"{pid} no longer has a table."

    def _do_finish(self):
        self.finished = True
        met = self._conditions()
        self.solved = all(met)
        if self.solved:
            return "Everyone is seated happily. Well done!"
        return f"Finished with {sum(met)} of {len(met)} parties seated correctly."

    # -- goal ------------------------------------------------------------------------------
    def _conditions(self):
        return [
            pid in self.seated and self._fits(pid, self.seated[pid])
            for pid in sorted(self.parties, key=lambda p: int(p[1:]))
        ]

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
        reads = [("list_reservations", {}), ("list_tables", {})]
        reads += [("get_party", {"party_id": pid}) for pid in self.parties]
        calls = [] if self.shown else reads  # the intro already shows what the reads return
        calls += [
            ("assign_table", {"party_id": pid, "table_id": tid}) for pid, tid in self.answer.items()
        ]
        calls.append(("finish", {}))
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
