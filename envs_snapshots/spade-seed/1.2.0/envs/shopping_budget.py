"""Buy one well-rated item per category within a budget that is only reachable with a coupon.

Teaches optimisation over gathered data: prices and ratings come from searches, coupon terms
from a separate list, only one coupon applies per order, and the budget is set so that just a
few combinations of products and coupon fit. Cheapest-first shopping falls into low ratings.
Lower difficulty levels have fewer categories and products, a stated turn budget, and at the
lowest two the intro already shows the products and coupons.
"""

import itertools
import json
import random

_TYPES = {"string": str, "integer": int, "number": (int, float)}
_CATEGORIES = {
    "headphones": (25, 120),
    "phone case": (8, 35),
    "charger": (12, 45),
    "keyboard": (20, 90),
    "mouse": (10, 60),
    "backpack": (25, 90),
    "water bottle": (8, 30),
    "desk lamp": (15, 70),
}
_BRANDS = ["Acme", "Nova", "Zenith", "Orbit"]
_MODELS = ["Lite", "Pro", "Max", "Go", "One", "Air", "Plus"]
# Difficulty levels: (categories, range of products per category, whether the intro shows the
# products and coupons, turn budget). The top level is the original task; level 0 is one item
# and a coupon, a 3-call episode.
LEVELS = [
    (1, (3, 4), True, 5),
    (2, (3, 4), True, 7),
    (2, (4, 5), False, 14),
    (3, (3, 4), False, 20),
    (3, (4, 5), False, 30),
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


class ShoppingBudgetEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "heldout",
        "skill": "optimization",
        "difficulty": "hard",
        "hint": "Search every category and read the coupon terms before adding anything. Drop "
        "products below the rating floor, then for each coupon work out the cheapest basket "
        "that meets that coupon's condition and compare the totals after discount, including "
        "buying with no coupon. Build that basket, apply its coupon, check the cart total, and "
        "only then check out.",
    }
    tools = [
        _tool(
            "search_products",
            "List products in a category with price and rating.",
            category=("string", "A category name from the task."),
        ),
        _tool("list_coupons", "List available coupon codes and their conditions."),
        _tool("add_to_cart", "Add a product to the cart.", product_id=("string", "e.g. 'P214'.")),
        _tool(
            "remove_from_cart",
            "Remove a product from the cart.",
            product_id=("string", "The product id."),
        ),
        _tool(
            "apply_coupon",
            "Use a coupon code for this order (replaces any earlier one).",
            code=("string", "The coupon code."),
        ),
        _tool("view_cart", "Show the cart, the coupon's effect and the total."),
        _tool("checkout", "Pay for the cart; this ends the episode."),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.level = _level(options)
        self.n_categories, self.per_category, self.shown, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        while True:  # resample until a coupon is needed and only a few baskets fit
            self._make_shop()
            if self._budget_is_tight():
                break
        self.cart, self.coupon = [], None
        self.turns, self.finished, self.solved = 0, False, False
        intro = (
            f"Buy exactly one item in each category: {', '.join(self.needed)}. Every item "
            f"must be rated at least {self.min_rating}. The total after discounts must not "
            f"exceed {_money(self.budget)}. One coupon can be used per order. Tools: "
            "search_products, list_coupons, add_to_cart, remove_from_cart, apply_coupon, "
            "view_cart, checkout. Checking out ends the episode."
        )
        if self.level < len(LEVELS) - 1:
            intro += f" You have {self.max_turns} tool calls."
        if self.shown:
            intro += "".join(f"\n{self._do_search_products(c)}" for c in self.needed)
            intro += f"\nCoupons:\n{self._do_list_coupons()}"
        return intro, {"categories": len(self.needed)}

    def _make_shop(self):
        rng = self._rng
        self.needed = rng.sample(sorted(_CATEGORIES), self.n_categories)
        self.min_rating = rng.choice([4.0, 4.2])
        ids = iter(rng.sample(range(100, 1000), 15))
        self.products = {}
        for category in self.needed:
            lo, hi = _CATEGORIES[category]
            for _ in range(rng.randint(*self.per_category)):
                brand = rng.choice(_BRANDS)
                self.products[f"P{next(ids)}"] = {
                    "name": f"{brand} {category} {rng.choice(_MODELS)}",
                    "brand": brand,
                    "category": category,
                    "price": rng.randint(lo, hi) * 100 - 1,
                    "rating": rng.randint(30, 49) / 10,
                }
        self.coupons = self._make_coupons()

    def _make_coupons(self):
        rng = self._rng
        percent, brand = rng.choice([10, 15, 20]), rng.choice(_BRANDS)
        category = rng.choice(self.needed)
        lo, hi = _CATEGORIES[category]
        return {
            f"SAVE{percent}": {
                "kind": "percent",
                "value": percent,
                "min_subtotal": rng.randint(6, 14) * 1000,
            },
            f"{brand.upper()}{rng.choice([10, 15, 20])}": {"kind": "brand", "brand": brand},
            f"{category.split()[0].upper()}{rng.choice([8, 12, 16])}": {
                "kind": "featured",
                "category": category,
                "min_price": rng.randint((lo + hi) // 2, hi) * 100,
            },
        }

    def _rated(self, category):
        return [
            p
            for p, item in self.products.items()
            if item["category"] == category and item["rating"] >= self.min_rating
        ]

    def _budget_is_tight(self):
        """Set the budget just above the best basket; demand that a coupon is needed."""
        baskets = [list(b) for b in itertools.product(*map(self._rated, self.needed))]
        if not baskets:
            return False
        options = sorted(
            (self._total(basket, code), code or "", basket)
            for basket in baskets
            for code in [None, *self.coupons]
        )
        best_total, best_code, best_basket = options[0]
        self.budget = -(-best_total // 100) * 100  # rounded up to whole dollars
        self.answer = (best_basket, best_code)
        no_coupon = min(self._total(basket, None) for basket in baskets)
        fitting = sum(total <= self.budget for total, _, _ in options)
        cheapest = min(self.products.values(), key=lambda item: item["price"])
        return (
            best_code != ""
            and no_coupon > self.budget
            and fitting <= 3
            and cheapest["rating"] < self.min_rating
        )

    # -- money -----------------------------------------------------------------------------
    def _discount(self, cart, code):
        coupon = self.coupons.get(code)
        items = [self.products[p] for p in cart]
        subtotal = sum(item["price"] for item in items)
        if coupon is None:
            return 0
        if coupon["kind"] == "percent":
            return (
                (subtotal * coupon["value"] + 50) // 100
                if subtotal >= coupon["min_subtotal"]
                else 0
            )
        amount = int("".join(ch for ch in code if ch.isdigit())) * 100
        if coupon["kind"] == "brand":
            return amount if sum(item["brand"] == coupon["brand"] for item in items) >= 2 else 0
        eligible = [
            item
            for item in items
            if item["category"] == coupon["category"] and item["price"] >= coupon["min_price"]
        ]
        return amount if eligible else 0

    def _total(self, cart, code):
        return sum(self.products[p]["price"] for p in cart) - self._discount(cart, code)

    def _coupon_terms(self, code):
        coupon = self.coupons[code]
        amount = "".join(ch for ch in code if ch.isdigit())
        if coupon["kind"] == "percent":
            floor = _money(coupon["min_subtotal"])
            return f"{amount}% off the whole order if the subtotal is at least {floor}"
        if coupon["kind"] == "brand":
            return f"${amount} off the order if it contains at least 2 {coupon['brand']} items"
        return (
            f"${amount} off the order if it contains a {coupon['category']} priced at least "
            f"{_money(coupon['min_price'])}"
        )

    # -- tools -----------------------------------------------------------------------------
    def _do_search_products(self, category):
        wanted = category.strip().lower()
        rows = [
            f"{p}: {item['name']}, {_money(item['price'])}, rated {item['rating']}"
            for p, item in self.products.items()
            if item["category"] == wanted
        ]
        return (
            "\n".join(rows)
            if rows
            else f"No products in {category!r}. Try: {', '.join(self.needed)}."
        )

    def _do_list_coupons(self):
        return "\n".join(f"{code}: {self._coupon_terms(code)}." for code in self.coupons)

    def _do_add_to_cart(self, product_id):
        pid = product_id.strip().upper()
        if pid not in self.products:
            return f"Error: no product {product_id!r}."
        if pid in self.cart:
            return f"{pid} is already in the cart."
        self.cart.append(pid)
        return f"Added {self.products[pid]['name']} ({_money(self.products[pid]['price'])})."

    def _do_remove_from_cart(self, product_id):
        pid = product_id.strip().upper()
        if pid not in self.cart:
            return f"Error: {product_id!r} is not in the cart."
        self.cart.remove(pid)
        return f"Removed {pid}."

    def _do_apply_coupon(self, code):
        code = code.strip().upper()
        if code not in self.coupons:
            return f"Error: unknown coupon {code!r}."
        self.coupon = code
        return f"Coupon {code} will be used for this order."

    def _do_view_cart(self):
        if not self.cart:
            return "The cart is empty."
        lines = [
            f"{p} {self.products[p]['name']}: {_money(self.products[p]['price'])}"
            for p in self.cart
        ]
        subtotal = sum(self.products[p]["price"] for p in self.cart)
        discount = self._discount(self.cart, self.coupon)
        coupon = f"{self.coupon} -{_money(discount)}" if self.coupon else "none"
        return "\n".join(
            lines
            + [
                f"Subtotal {_money(subtotal)}; coupon {coupon}; total "
                f"{_money(subtotal - discount)}."
            ]
        )

    def _do_checkout(self):
        self.finished = True
        met = self._conditions()
        self.solved = all(met)
        total = _money(self._total(self.cart, self.coupon))
        if self.solved:
            return f"Order placed for {total}, within budget. Well done!"
        return f"Order placed for {total}, but only {sum(met)} of {len(met)} requirements were met."

    # -- goal ------------------------------------------------------------------------------
    def _conditions(self):
        """One item per category; all items rated and relevant; complete basket within budget."""
        per_category = [
            sum(self.products[p]["category"] == c for p in self.cart) == 1 for c in self.needed
        ]
        quality = bool(self.cart) and all(
            self.products[p]["rating"] >= self.min_rating
            and self.products[p]["category"] in self.needed
            for p in self.cart
        )
        affordable = all(per_category) and self._total(self.cart, self.coupon) <= self.budget
        return per_category + [quality, affordable]

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
        basket, code = self.answer
        reads = [("search_products", {"category": c}) for c in self.needed]
        reads.append(("list_coupons", {}))
        calls = [] if self.shown else reads  # the intro already shows what the reads return
        calls += [("add_to_cart", {"product_id": p}) for p in basket]
        calls.append(("apply_coupon", {"code": code}))
        if not self.shown:  # the shortest levels skip the check
            calls.append(("view_cart", {}))
        calls.append(("checkout", {}))
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
