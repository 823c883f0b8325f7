"""Schedule a meeting that fits several people's calendars and a free, large-enough room.

Teaches gathering constraints through queries before committing: the attendees' busy times,
the rooms' sizes and the rooms' bookings are only visible through tools, and only one or two
slots in the whole week satisfy all of them at once. Lower difficulty levels have fewer days,
attendees and rooms, a stated turn budget, and show the attendees' calendars (at the lowest
level also the rooms and their bookings) in the intro.
"""

import json
import random

_TYPES = {"string": str, "integer": int, "number": (int, float)}
_PEOPLE = ["Ana", "Ben", "Chloe", "Dev", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jon"]
_ROOMS = ["Aurora", "Birch", "Cedar", "Delta", "Ember", "Fjord"]
_TOPICS = ["Design review", "Budget sync", "Hiring panel", "Launch retro", "Roadmap planning"]
_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri"]
_SLOTS = 16  # half-hour slots from 09:00 to 17:00
# Difficulty levels: (days, range of attendees, rooms, meeting lengths in half hours, what the
# intro shows (0 nothing, 1 the attendees' busy times, 2 also the rooms and their bookings),
# turn budget). The top level is the original task; level 0 is a 2-call episode.
LEVELS = [
    (1, (2, 2), 2, [2], 2, 4),
    (1, (2, 2), 3, [2, 3], 1, 8),
    (2, (2, 3), 3, [2, 3], 0, 14),
    (3, (3, 3), 4, [2, 3], 0, 18),
    (3, (3, 4), 4, [2, 3], 0, 25),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def _clock(slot):
    minutes = 9 * 60 + 30 * slot
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _ranges(slots):
    """Format a set of slots as merged 'HH:MM-HH:MM' ranges."""
    out, ordered = [], sorted(slots)
    for slot in ordered:
        if out and out[-1][1] == slot:
            out[-1][1] = slot + 1
        else:
            out.append([slot, slot + 1])
    return ", ".join(f"{_clock(a)}-{_clock(b)}" for a, b in out) or "free"


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


class MeetingSchedulerEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "heldout",
        "skill": "constraint satisfaction",
        "difficulty": "medium",
        "hint": "Collect everything before booking: every attendee's busy times, the room "
        "capacities, and the bookings of each room large enough. Intersect the attendees' free "
        "time day by day, keep only windows long enough for the meeting, then look for a big "
        "enough room that is also free then. Book exactly one event.",
    }
    tools = [
        _tool(
            "get_busy_times",
            "Show when an attendee is busy on each day of the week.",
            person=("string", "The attendee's name."),
        ),
        _tool("list_rooms", "List meeting rooms and how many people each seats."),
        _tool(
            "get_room_bookings",
            "Show when a room is already booked on each day.",
            room=("string", "The room name."),
        ),
        _tool(
            "create_event",
            "Book the meeting (its length is fixed by the task).",
            day=("string", "Day of the week, e.g. 'Tue'."),
            start=("string", "Start time 'HH:MM' on the half hour."),
            room=("string", "The room name."),
        ),
        _tool("cancel_event", "Cancel an event you booked.", event_id=("string", "e.g. 'E1'.")),
        _tool("finish", "Declare the scheduling done; this ends the episode."),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.level = _level(options)
        days, attendees, rooms, lengths, self.shown, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        rng = self._rng
        self.days = _DAYS[:days] if rng.random() < 0.5 else _DAYS[len(_DAYS) - days :]
        self.attendees = rng.sample(_PEOPLE, rng.randint(*attendees))
        self.length = rng.choice(lengths)  # in half-hour slots
        self.topic = rng.choice(_TOPICS)
        self._make_rooms(rooms)
        self.answer = (
            rng.choice(self.days),
            rng.randrange(_SLOTS - self.length + 1),
            rng.choice([r for r, cap in self.rooms.items() if cap >= len(self.attendees)]),
        )
        self.busy = {name: self._random_week() for name in self.attendees + sorted(self.rooms)}
        self._prune_options()
        self.events, self.next_id = {}, 1
        self.turns, self.finished, self.solved = 0, False, False
        intro = (
            f"Book a {30 * self.length}-minute '{self.topic}' with "
            f"{', '.join(self.attendees)} on {'/'.join(self.days)}, within 09:00-17:00. "
            "Everyone must be free, and the room must seat all attendees and be free. Tools: "
            "get_busy_times, list_rooms, get_room_bookings, create_event, cancel_event, "
            "finish. Call finish when done; the episode ends then."
        )
        if self.level < len(LEVELS) - 1:
            intro += f" You have {self.max_turns} tool calls."
        if self.shown:
            intro += "".join(f"\n{self._do_get_busy_times(who)}" for who in self.attendees)
        if self.shown == 2:
            intro += f"\n{self._do_list_rooms()}"
            intro += "".join(f"\n{self._do_get_room_bookings(r)}" for r in sorted(self.rooms))
        return intro, {"attendees": len(self.attendees)}

    def _make_rooms(self, count):
        names = self._rng.sample(_ROOMS, count)
        need = len(self.attendees)
        caps = [
            self._rng.randint(need, need + 4),
            self._rng.randint(need, need + 4),
            self._rng.randint(min(2, need - 1), need - 1),  # too small (for two people: 1 seat)
            self._rng.randint(2, need + 4),
        ]
        self.rooms = dict(zip(names, caps[:count], strict=True))

    def _random_week(self):
        """Random busy blocks for each day, never touching the planted answer's slots."""
        week = {}
        for day in self.days:
            slots = set()
            for _ in range(self._rng.randint(1, 3)):
                start = self._rng.randrange(_SLOTS)
                slots.update(range(start, min(_SLOTS, start + self._rng.randint(1, 4))))
            week[day] = slots
        day, start, _ = self.answer
        week[day] -= set(range(start, start + self.length))
        return week

    def _options(self):
        big = [r for r, cap in self.rooms.items() if cap >= len(self.attendees)]
        return [
            (day, start, room)
            for day in self.days
            for start in range(_SLOTS - self.length + 1)
            for room in big
            if self._all_free(day, start, room)
        ]

    def _all_free(self, day, start, room):
        span = set(range(start, start + self.length))
        return all(not (self.busy[who][day] & span) for who in self.attendees + [room])

    def _prune_options(self):
        """Add busy blocks until at most two bookings satisfy every constraint."""
        options = [o for o in self._options() if o != self.answer]
        while len(options) > 1:
            day, start, room = self._rng.choice(options)
            slot, who = self._blocker(day, start, room)
            self.busy[who][day].add(slot)
            options = [o for o in self._options() if o != self.answer]

    def _blocker(self, day, start, room):
        """A (slot, calendar) whose blocking kills this option but not the planted answer."""
        a_day, a_start, a_room = self.answer
        taken = set(range(a_start, a_start + self.length)) if day == a_day else set()
        span = range(start, start + self.length)
        free_slots = [s for s in span if s not in taken]
        if free_slots:
            return self._rng.choice(free_slots), self._rng.choice(self.attendees + [room])
        return self._rng.choice(list(span)), room  # same slots as the answer: only the room differs

    # -- tools -----------------------------------------------------------------------------
    def _do_get_busy_times(self, person):
        name = person.strip().title()
        if name not in self.attendees:
            return f"Error: {person!r} is not an attendee ({', '.join(self.attendees)})."
        return f"{name} is busy: " + "; ".join(
            f"{d} {_ranges(self.busy[name][d])}" for d in self.days
        )

    def _do_list_rooms(self):
        return "Rooms: " + ", ".join(f"{r} (seats {cap})" for r, cap in sorted(self.rooms.items()))

    def _do_get_room_bookings(self, room):
        name = room.strip().title()
        if name not in self.rooms:
            return f"Error: no room {room!r}."
        return f"{name} is booked: " + "; ".join(
            f"{d} {_ranges(self.busy[name][d])}" for d in self.days
        )

    def _do_create_event(self, day, start, room):
        day, name = day.strip().title()[:3], room.strip().title()
        slot = self._parse_start(start)
        if day not in self.days:
            return f"Error: day must be one of {', '.join(self.days)}."
        if name not in self.rooms:
            return f"Error: no room {room!r}."
        if slot is None or slot + self.length > _SLOTS:
            return "Error: start must be 'HH:MM' on the half hour, ending by 17:00."
        event_id = f"E{self.next_id}"
        self.next_id += 1
        self.events[event_id] = (day, slot, name)
        end = _clock(slot + self.length)
        return f"Created {event_id}: {self.topic}, {day} {_clock(slot)}-{end} in {name}."

    @staticmethod
    def _parse_start(text):
        hours, _, minutes = text.strip().partition(":")
        if not (hours.isdigit() and minutes in ("00", "30")):
            return None
        slot = (int(hours) - 9) * 2 + (minutes == "30")
        return slot if 0 <= slot < _SLOTS else None

    def _do_cancel_event(self, event_id):
        if self.events.pop(event_id.strip().upper(), None) is None:
            return f"Error: no event {event_id!r}."
        return f"Cancelled {event_id.strip().upper()}."

    def _do_finish(self):
        self.finished = True
        met = self._conditions()
        self.solved = all(met)
        if self.solved:
            return "The meeting is booked and works for everyone. Well done!"
        return f"Finished with {sum(met)} of {len(met)} requirements met."

    # -- goal ------------------------------------------------------------------------------
    def _conditions(self):
        """One event booked; each attendee free; room big enough; room free."""
        if not self.events:
            return [False] * (len(self.attendees) + 3)
        day, start, room = self.events[max(self.events, key=lambda e: int(e[1:]))]
        span = set(range(start, start + self.length))
        return (
            [len(self.events) == 1]
            + [not (self.busy[who][day] & span) for who in self.attendees]
            + [self.rooms[room] >= len(self.attendees), not (self.busy[room][day] & span)]
        )

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
        day, start, room = self.answer
        reads = [("get_busy_times", {"person": who}) for who in self.attendees]
        reads += [("list_rooms", {}), ("get_room_bookings", {"room": room})]
        # The intro already shows the calendars (shown 1) or what every read returns (shown 2).
        calls = {0: reads, 1: reads[len(self.attendees) :], 2: []}[self.shown]
        calls += [
            ("create_event", {"day": day, "start": _clock(start), "room": room}),
            ("finish", {}),
        ]
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
