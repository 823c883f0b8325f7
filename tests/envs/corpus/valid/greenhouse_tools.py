"""Tool use: water the greenhouse beds into their moisture band without flooding any.

State: zones (a dict) of beds (lists of `Bed` dataclasses). Over-watering a bed floods the
greenhouse and ends the episode at once, with the share of beds already in band as credit.
"""

import json
import random
from dataclasses import dataclass


@dataclass
class Bed:
    plant: str
    moisture: int  # percent
    low: int
    high: int

    @property
    def in_band(self):
        return self.low <= self.moisture <= self.high


PLANTS = {
    "basil": (40, 55),
    "tomato": (55, 70),
    "fern": (70, 85),
    "cactus": (10, 25),
    "mint": (60, 75),
    "orchid": (45, 60),
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_sensors",
            "description": "Moisture and target band of every bed in a zone.",
            "parameters": {
                "type": "object",
                "properties": {"zone": {"type": "string", "enum": ["north", "south"]}},
                "required": ["zone"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "water",
            "description": "Add water to one bed; each litre adds 5 points.",
            "parameters": {
                "type": "object",
                "required": ["zone", "bed", "litres"],
                "properties": {
                    "zone": {"type": "string", "enum": ["north", "south"]},
                    "bed": {"type": "integer", "minimum": 0},
                    "litres": {"type": "integer", "minimum": 1, "maximum": 10},
                },
            },
        },
    },
]


class GreenhouseToolsEnv:
    metadata = {
        "kind": "tool_use",
        "skill": "measurement",
        "difficulty": "medium",
        "hint": "Read the sensors first; a bed over its band floods everything.",
    }
    tools = TOOLS
    max_turns = 20

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.zones = {"north": [], "south": []}
        for zone in self.zones:
            for plant in rng.sample(sorted(PLANTS), 2):
                low, high = PLANTS[plant]
                dry = rng.randint(max(0, low - 30), low - 1)
                self.zones[zone].append(Bed(plant, dry, low, high))
        self.turns = 0
        return "Four beds in two zones are dry. Bring each into its band; do not flood.", {}

    def _share(self):
        beds = [bed for beds in self.zones.values() for bed in beds]
        return sum(bed.in_band for bed in beds) / len(beds)

    def step(self, action):
        self.turns += 1
        out = self.turns >= self.max_turns
        try:
            call = json.loads(action)
            name = call["name"]
            arguments = call.get("arguments") or {}
            assert isinstance(arguments, dict)
        except (ValueError, TypeError, KeyError, AttributeError, AssertionError):
            return "Error: one JSON tool call please.", 0.9 * self._share(), out, False, {}
        zone = self.zones.get(arguments.get("zone"))
        if name == "read_sensors" and zone is not None:
            rows = [
                f"bed {i}: {b.plant} at {b.moisture}% (band {b.low}-{b.high}%)"
                for i, b in enumerate(zone)
            ]
            return "\n".join(rows), 0.9 * self._share(), out, False, {}
        if name == "water" and zone is not None:
            bed, litres = arguments.get("bed"), arguments.get("litres")
            if not (
                isinstance(bed, int)
                and 0 <= bed < len(zone)
                and isinstance(litres, int)
                and 1 <= litres <= 10
            ):
                return "Error: bad bed or litres.", 0.9 * self._share(), out, False, {}
            target = zone[bed]
            target.moisture += 5 * litres
            if target.moisture > target.high:
                return f"Bed {bed} floods!", 0.9 * self._share(), True, False, {"flooded": True}
            if self._share() == 1.0:
                return "Every bed is in band.", 1.0, True, False, {}
            return f"Bed {bed} now at {target.moisture}%.", 0.9 * self._share(), out, False, {}
        return "Error: unknown tool or zone.", 0.9 * self._share(), out, False, {}

    def solution(self):
        calls = [{"name": "read_sensors", "arguments": {"zone": z}} for z in self.zones]
        for zone, beds in self.zones.items():
            for index, bed in enumerate(beds):
                # the fewest litres that reach the band (5 points each) without passing it
                litres = -(-(bed.low - bed.moisture) // 5)
                calls.append(
                    {"name": "water", "arguments": {"zone": zone, "bed": index, "litres": litres}}
                )
        return [json.dumps(call) for call in calls]

    def close(self):
        pass
