"""Tool use with nested arguments: book a courier pickup for an order.

`schedule_pickup` takes an object (the address), an enum (the slot), a boolean and an array of
parcel ids. Arguments may also arrive as a JSON-encoded string, as some clients send them.
"""

import json
import random

SLOTS = ["08-10", "10-12", "12-14", "14-16", "16-18"]
STREETS = ["Elm Road", "Quay Street", "Birch Lane", "Canal Walk", "Station Hill"]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Show an order: address, parcels, free slots.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "schedule_pickup",
            "description": "Book the pickup of an order's parcels.",
            "parameters": {
                "type": "object",
                "required": ["order_id", "slot", "address", "parcels", "signature_required"],
                "properties": {
                    "order_id": {"type": "string"},
                    "slot": {"type": "string", "enum": SLOTS},
                    "address": {
                        "type": "object",
                        "required": ["street", "number"],
                        "properties": {
                            "street": {"type": "string"},
                            "number": {"type": "integer", "minimum": 1},
                        },
                    },
                    "parcels": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    "signature_required": {"type": "boolean"},
                },
            },
        },
    },
]


class CourierToolsEnv:
    metadata = {
        "kind": "tool_use",
        "skill": "form filling",
        "difficulty": "medium",
        "hint": "Copy every field from the order, and read the fragile flag.",
    }
    tools = TOOLS
    max_turns = 10

    def reset(self, seed=None):
        rng = random.Random(seed)
        self.order_id = f"ORD-{rng.randint(10000, 99999)}"
        self.order = {
            "address": {"street": rng.choice(STREETS), "number": rng.randint(1, 200)},
            "parcels": [f"P{rng.randint(100, 999)}" for _ in range(rng.randint(1, 3))],
            "free_slots": sorted(rng.sample(SLOTS, 2)),
            "fragile": rng.random() < 0.5,
        }
        self.booked = None
        self.turns = 0
        return (
            f"Book the courier pickup for order {self.order_id}. Fragile parcels need a "
            "signature. Use the earliest free slot."
        ), {"order_id": self.order_id}

    def _expected(self):
        return {
            "order_id": self.order_id,
            "slot": self.order["free_slots"][0],
            "address": self.order["address"],
            "parcels": self.order["parcels"],
            "signature_required": self.order["fragile"],
        }

    def step(self, action):
        self.turns += 1
        over = self.turns >= self.max_turns
        try:
            call = json.loads(action)
            name, arguments = call["name"], call.get("arguments", {})
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            if not isinstance(arguments, dict):
                raise TypeError
        except (ValueError, TypeError, KeyError):
            return 'Error: expected {"name": ..., "arguments": {...}}.', 0.0, False, over, {}
        if name == "lookup_order":
            if arguments.get("order_id") != self.order_id:
                return "Error: no such order.", 0.0, False, over, {}
            return json.dumps(self.order), 0.1, False, over, {}
        if name == "schedule_pickup":
            expected = self._expected()
            fields = sum(arguments.get(key) == value for key, value in expected.items())
            if fields == len(expected):
                return "Pickup booked.", 1.0, True, False, {}
            return (
                f"Rejected: {len(expected) - fields} field(s) do not match the order.",
                round(fields / (len(expected) + 1), 3),
                False,
                over,
                {},
            )
        return f"Error: unknown tool {name!r}.", 0.0, False, over, {}

    def solution(self):
        return [
            json.dumps({"name": "lookup_order", "arguments": {"order_id": self.order_id}}),
            json.dumps({"name": "schedule_pickup", "arguments": self._expected()}),
        ]

    def close(self):
        pass
