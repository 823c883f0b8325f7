"""Ship every open order from a warehouse, buying only the missing stock within a budget.

Teaches resource allocation from gathered facts: the orders' contents, the stock that is
really shippable (some is reserved), and the pack sizes and prices of restocks are hidden
behind tools, and the purchasing budget only covers the exact number of packs needed. Lower
difficulty levels have fewer products, orders and shortages, a stated turn budget, and at the
lowest two the intro already shows the orders and the stock.
"""

import json
import random

_TYPES = {"string": str, "integer": int, "number": (int, float)}
# fmt: off
_PRODUCTS = ["steel hinge", "oak shelf", "desk lamp", "cable reel", "door stop", "wall hook",
             "brass knob", "glass jar", "tool box", "bike light", "rain gauge", "bird feeder"]
_CUSTOMERS = ["Ada Hardware", "Brookside Cafe", "Corner DIY", "Delta Builders", "Elm Studio",
              "Fox & Sons", "Green Gardens", "Harbor Homes"]
# fmt: on
# Difficulty levels: ranges of (products, orders, lines per order, products short of stock),
# whether the intro shows the orders and stock, turn budget. The top level is the original
# task; level 0 is one order and one reorder, a 3-call episode.
LEVELS = [
    ((2, 2), (1, 1), (1, 1), (1, 1), True, 5),
    ((3, 3), (2, 2), (1, 2), (1, 1), True, 7),
    ((3, 4), (2, 3), (1, 2), (1, 2), False, 20),
    ((4, 5), (3, 4), (1, 3), (2, 2), False, 30),
    ((5, 6), (4, 5), (1, 3), (2, 3), False, 40),
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


class WarehouseOrdersEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "train",
        "skill": "resource allocation",
        "difficulty": "medium",
        "hint": "Read every order and add up the demand per product before buying anything. "
        "Check each product's stock, counting only units that are not reserved, and its pack "
        "size and price. Buy the smallest number of packs that covers each shortfall across all "
        "orders together, then ship everything.",
    }
    tools = [
        _tool("list_orders", "List open orders (id, customer, status)."),
        _tool("get_order", "Show the lines of one order.", order_id=("string", "e.g. 'O-102'.")),
        _tool(
            "check_stock",
            "Show a product's stock, reservations and restock terms.",
            sku=("string", "Product code, e.g. 'SKU-104'."),
        ),
        _tool(
            "reorder",
            "Buy packs of a product; they arrive at once and are paid from the budget.",
            sku=("string", "Product code."),
            packs=("integer", "Number of packs, at least 1."),
        ),
        _tool(
            "ship_order",
            "Ship an order, taking its items from shippable stock.",
            order_id=("string", "The order id."),
        ),
        _tool("finish", "Declare the work done; this ends the episode."),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.level = _level(options)
        *counts, self.shown, turns = LEVELS[self.level]
        products, orders, self.line_counts, self.short_counts = counts
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        rng = self._rng
        codes = rng.sample(range(100, 200), rng.randint(*products))
        names = rng.sample(_PRODUCTS, len(codes))
        self.skus = [f"SKU-{code}" for code in codes]
        self.names = dict(zip(self.skus, names, strict=True))
        self.orders = self._make_orders(rng.randint(*orders))
        self.shipped = {order_id: False for order_id in self.orders}
        self._make_stock()
        self.turns, self.finished, self.solved = 0, False, False
        n = len(self.orders)
        ship_all = f"Ship all {n} open orders." if n > 1 else "Ship the one open order."
        intro = (
            f"{ship_all} Shipping fails if shippable stock "
            "(units on hand that are not reserved) is short. You can reorder stock in whole "
            f"packs; your purchasing budget is ${self.budget}, and a purchase that exceeds "
            "what is left is refused. Tools: list_orders, get_order, check_stock, reorder, "
            "ship_order, finish. Call finish when done; the episode ends then."
        )
        if self.level < len(LEVELS) - 1:
            intro += f" You have {self.max_turns} tool calls."
        if self.shown:
            intro += "".join(f"\n{self._do_get_order(order_id)}" for order_id in self.orders)
            intro += "".join(f"\n{self._do_check_stock(sku)}" for sku in self._ordered())
        return intro, {"orders": len(self.orders)}

    def _make_orders(self, count):
        rng = self._rng
        customers = rng.sample(_CUSTOMERS, count)
        orders = {}
        for i, customer in enumerate(customers):
            skus = rng.sample(self.skus, rng.randint(*self.line_counts))
            lines = {sku: rng.randint(1, 9) for sku in skus}
            orders[f"O-{101 + i}"] = {"customer": customer, "lines": lines}
        return orders

    def _make_stock(self):
        """Two or three products fall short; the budget buys exactly the packs that cover them."""
        rng = self._rng
        demand = {
            sku: sum(o["lines"].get(sku, 0) for o in self.orders.values()) for sku in self.skus
        }
        wanted = [sku for sku in self.skus if demand[sku] > 0]
        short = set(rng.sample(wanted, min(len(wanted), rng.randint(*self.short_counts))))
        self.stock, self.packs_needed = {}, {}
        for sku in self.skus:
            pack, price = rng.choice([4, 5, 6, 10, 12]), rng.randint(12, 60)
            if sku in short:
                shortfall = rng.randint(1, min(demand[sku], 2 * pack))
                available = demand[sku] - shortfall
                self.packs_needed[sku] = -(-shortfall // pack)
            else:
                available = demand[sku] + rng.randint(0, 5)
            reserved = rng.randint(0, 4)
            self.stock[sku] = {
                "on_hand": available + reserved,
                "reserved": reserved,
                "pack": pack,
                "price": price,
            }
        cost = sum(self.stock[sku]["price"] * n for sku, n in self.packs_needed.items())
        cheapest = min(item["price"] for item in self.stock.values())
        self.budget = cost + rng.randint(0, cheapest - 1)
        self.spent = 0

    def _ordered(self):
        """The products the orders ask for, each once, in order of appearance."""
        return list(dict.fromkeys(sku for order in self.orders.values() for sku in order["lines"]))

    # -- tools -----------------------------------------------------------------------------
    def _do_list_orders(self):
        return "\n".join(
            f"{oid}: {o['customer']}, {'shipped' if self.shipped[oid] else 'open'}"
            for oid, o in self.orders.items()
        )

    def _do_get_order(self, order_id):
        order = self.orders.get(order_id.strip().upper())
        if order is None:
            return f"Error: no order {order_id!r}."
        lines = ", ".join(
            f"{qty} x {sku} ({self.names[sku]})" for sku, qty in order["lines"].items()
        )
        return f"{order_id.strip().upper()} for {order['customer']}: {lines}."

    def _do_check_stock(self, sku):
        item = self.stock.get(sku.strip().upper())
        if item is None:
            return f"Error: no product {sku!r}."
        return (
            f"{sku.strip().upper()} {self.names[sku.strip().upper()]}: {item['on_hand']} on "
            f"hand, of which {item['reserved']} reserved for a pending return (not "
            f"shippable). Restock comes in packs of {item['pack']} at ${item['price']} per pack."
        )

    def _do_reorder(self, sku, packs):
        sku = sku.strip().upper()
        if sku not in self.stock:
            return f"Error: no product {sku!r}."
        if packs < 1:
            return "Error: packs must be at least 1."
        item, left = self.stock[sku], self.budget - self.spent
        cost = packs * item["price"]
        if cost > left:
            return f"Refused: {packs} pack(s) cost ${cost} but only ${left} of the budget is left."
        self.spent += cost
        item["on_hand"] += packs * item["pack"]
        return (
            f"Bought {packs} pack(s) of {sku} for ${cost}: {item['on_hand']} on hand now. "
            f"Budget left: ${self.budget - self.spent}."
        )

    def _do_ship_order(self, order_id):
        order_id = order_id.strip().upper()
        order = self.orders.get(order_id)
        if order is None:
            return f"Error: no order {order_id!r}."
        if self.shipped[order_id]:
            return f"{order_id} has already shipped."
        if any(self._shippable(sku) < qty for sku, qty in order["lines"].items()):
            return f"Cannot ship {order_id}: not enough shippable stock for at least one line."
        for sku, qty in order["lines"].items():
            self.stock[sku]["on_hand"] -= qty
        self.shipped[order_id] = True
        return f"Shipped {order_id} to {order['customer']}."

    def _shippable(self, sku):
        return self.stock[sku]["on_hand"] - self.stock[sku]["reserved"]

    def _do_finish(self):
        self.finished = True
        met = self._conditions()
        self.solved = all(met)
        if self.solved:
            return "Every order is on its way, within budget. Well done!"
        return f"Finished with {sum(met)} of {len(met)} orders shipped."

    # -- goal ------------------------------------------------------------------------------
    def _conditions(self):
        return [self.shipped[order_id] for order_id in sorted(self.orders)]

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
        reads = [("list_orders", {})]
        reads += [("get_order", {"order_id": order_id}) for order_id in self.orders]
        reads += [("check_stock", {"sku": sku}) for sku in self._ordered()]
        calls = [] if self.shown else reads  # the intro already shows what the reads return
        calls += [("reorder", {"sku": sku, "packs": n}) for sku, n in self.packs_needed.items()]
        calls += [("ship_order", {"order_id": order_id}) for order_id in self.orders]
        calls.append(("finish", {}))
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
