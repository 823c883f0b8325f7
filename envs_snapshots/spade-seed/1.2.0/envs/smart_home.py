"""Bring every room of a smart home into its comfort range by experimenting with devices.

Teaches experimentation and system identification: how much a heater warms its room (and the
room next door), how much light a lamp or an open blind adds, and the starting conditions are
all hidden. The agent must change one thing at a time, read the sensors, infer the effects,
and then reach all targets without exceeding the power cap that trips the breaker. Lower
difficulty levels have fewer rooms, no warmth spreading next door, a house that meets no target
at the start, a stated turn budget, and at the lowest two the device effects in the intro.
"""

import json
import random

_TYPES = {"string": str, "integer": int, "number": (int, float)}
_ROOMS = ["living", "bedroom", "office", "kitchen"]
_MAX_LEVEL = {"heater": 4, "lamp": 4, "blinds": 3}
_WATTS = {"heater": 500, "lamp": 60, "blinds": 0}
# Difficulty levels: (range of rooms, most degrees a heater adds next door per level, whether
# the intro states the device effects, turn budget). The top level is the original task;
# level 0 is one room with known effects, a 3- or 4-call episode.
LEVELS = [
    ((1, 1), 0, True, 6),
    ((2, 2), 0, True, 10),
    ((2, 2), 0, False, 20),
    ((2, 2), 1, False, 30),
    ((2, 3), 1, False, 40),
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


class SmartHomeEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "train",
        "skill": "experimentation",
        "difficulty": "hard",
        "hint": "Measure before you plan: read the sensors, change a single device by one level, "
        "and read again, so each change tells you exactly one effect. Check every room after "
        "changing a heater, since warmth can spread next door. Use blinds for light where you "
        "can because they draw no power, and keep a running total of the power draw so the "
        "breaker never trips.",
    }
    tools = [
        _tool("list_devices", "List devices with their room, level, maximum level and power use."),
        _tool("read_sensors", "Read every room's temperature and light level, and the power draw."),
        _tool(
            "set_device",
            "Set a device to a level (0 is off or closed).",
            device_id=("string", "e.g. 'heater_office'."),
            level=("integer", "The new level."),
        ),
        _tool("finish", "Declare the house comfortable; this ends the episode."),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.difficulty = _level(options)  # named so: self.level holds the device levels
        rooms, leak, shown, turns = LEVELS[self.difficulty]
        self.max_turns = self._turns_given or turns
        top = self.difficulty == len(LEVELS) - 1
        self._rng = random.Random(seed)
        rng = self._rng
        self.rooms = _ROOMS[: rng.randint(*rooms)]
        self.physics = {
            room: {
                "base": rng.randint(12, 17),
                "heat": rng.randint(1, 3),
                "sun": rng.randrange(60, 170, 10),
                "lamp": rng.randrange(50, 175, 25),
            }
            for room in self.rooms
        }
        self.leak = {room: rng.randint(0, leak) for room in self.rooms[:-1]}  # into the next room
        self.devices = [f"{kind}_{room}" for room in self.rooms for kind in _MAX_LEVEL]
        # Below the top level every heater and lamp is needed, so the start meets no target
        # and doing nothing earns nothing.
        lowest = {"heater": 1} if top else {"heater": 2, "lamp": 1}
        self.answer = {
            d: rng.randint(lowest.get(d.split("_")[0], 0), _MAX_LEVEL[d.split("_")[0]])
            for d in self.devices
        }
        self.level = dict(self.answer)  # targets are read off the planted answer
        self.targets = {room: (self._temperature(room), self._light(room)) for room in self.rooms}
        self.cap = self._power() + rng.randint(0, 59)
        while True:  # a cold, mostly dark house that does not already meet the targets
            self.level = {
                d: rng.randint(0, 2) if d.startswith("blinds") else 0 for d in self.devices
            }
            if not (all if top else any)(self._conditions()):
                break
        self.turns, self.finished, self.solved = 0, False, False
        goals = "; ".join(
            f"{room}: {t - 1} to {t + 1} C and {max(0, lux - 40)} to {lux + 40} lux"
            for room, (t, lux) in self.targets.items()
        )
        intro = (
            f"Make the house comfortable. Targets: {goals}. The breaker trips, switching "
            f"every heater and lamp off, if the total draw exceeds {self.cap} W. Device "
            "effects are unknown: experiment. Tools: list_devices, read_sensors, set_device, "
            "finish. Call finish when done; the episode ends then."
        )
        if not top:
            intro += f" You have {self.max_turns} tool calls."
        self.shown = shown
        if shown:
            intro += f"\nDevices:\n{self._do_list_devices()}\nEffects: {self._effects()}"
        return intro, {"rooms": len(self.rooms)}

    def _effects(self):
        """The hidden physics in words, for the levels whose intro states it."""
        parts = []
        for i, room in enumerate(self.rooms):
            p = self.physics[room]
            parts.append(
                f"{room} is {p['base']} C with its heater off; heater_{room} adds {p['heat']} C, "
                f"lamp_{room} {p['lamp']} lux and blinds_{room} {p['sun']} lux per level"
            )
            if i + 1 < len(self.rooms) and self.leak[room]:
                parts[-1] += f"; heater_{room} also adds {self.leak[room]} C per level next door"
        return "; ".join(parts) + "."

    # -- physics ---------------------------------------------------------------------------
    def _temperature(self, room):
        p = self.physics[room]
        warmth = p["base"] + p["heat"] * self.level[f"heater_{room}"]
        i = self.rooms.index(room)
        if i > 0:
            warmth += self.leak[self.rooms[i - 1]] * self.level[f"heater_{self.rooms[i - 1]}"]
        return warmth

    def _light(self, room):
        p = self.physics[room]
        return p["sun"] * self.level[f"blinds_{room}"] + p["lamp"] * self.level[f"lamp_{room}"]

    def _power(self):
        return sum(_WATTS[d.split("_")[0]] * level for d, level in self.level.items())

    # -- tools -----------------------------------------------------------------------------
    def _do_list_devices(self):
        return "\n".join(
            f"{d}: level {self.level[d]} of {_MAX_LEVEL[d.split('_')[0]]}, "
            f"{_WATTS[d.split('_')[0]]} W per level"
            for d in self.devices
        )

    def _do_read_sensors(self):
        rooms = "; ".join(
            f"{room}: {self._temperature(room)} C, {self._light(room)} lux" for room in self.rooms
        )
        return f"{rooms}. Power draw {self._power()} W of {self.cap} W."

    def _do_set_device(self, device_id, level):
        device = device_id.strip().lower()
        if device not in self.level:
            return f"Error: no device {device_id!r}; see list_devices."
        top = _MAX_LEVEL[device.split("_")[0]]
        if not 0 <= level <= top:
            return f"Error: {device} accepts levels 0 to {top}."
        self.level[device] = level
        if self._power() > self.cap:
            for d in self.level:
                if not d.startswith("blinds"):
                    self.level[d] = 0
            return (
                f"{device} set to {level}, but the draw exceeded {self.cap} W: the breaker "
                "tripped and every heater and lamp is now off."
            )
        return f"{device} set to {level}."

    def _do_finish(self):
        self.finished = True
        met = self._conditions()
        self.solved = all(met)
        if self.solved:
            return "Every room is comfortable. Well done!"
        return f"Finished with {sum(met)} of {len(met)} room targets met."

    # -- goal ------------------------------------------------------------------------------
    def _conditions(self):
        met = []
        for room, (temp, lux) in self.targets.items():
            met += [abs(self._temperature(room) - temp) <= 1, abs(self._light(room) - lux) <= 40]
        return met

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
        if self.turns >= self.max_turns and self.difficulty < len(LEVELS) - 1:
            self.finished = True  # a stated budget: running out of it ends the episode
        truncated = not self.finished and self.turns >= self.max_turns
        return obs, self._reward(), self.finished, truncated, {"turn": self.turns}

    def solution(self):
        changes = [d for d in self.devices if self.level[d] != self.answer[d]]
        changes.sort(key=lambda d: self.answer[d] - self.level[d])  # lower first: never trip
        sets = [("set_device", {"device_id": d, "level": self.answer[d]}) for d in changes]
        if self.shown:  # the intro states the effects: no reading needed
            calls = sets + [("finish", {})]
        else:
            calls = [("list_devices", {}), ("read_sensors", {})]
            calls += sets + [("read_sensors", {}), ("finish", {})]
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
