"""Repair the computed column of an invoice spreadsheet using rules written in a notes cell.

Teaches careful calculation with cell tools: the discount and tax rules live in the sheet
itself, some totals are blank and some are wrong, and every formula cell must be recomputed
from the (protected) quantities and prices, in dependency order. Lower difficulty levels have
fewer lines (at the lowest no tax rows), a stated turn budget, and at the lowest two the whole
sheet in the intro.
"""

import json
import math
import random
import re
from decimal import ROUND_HALF_UP, Decimal

_TYPES = {"string": str, "integer": int, "number": (int, float)}
# fmt: off
_ITEMS = ["Hex bolts", "Wood screws", "Hinges", "Paint (1 L)", "Sandpaper", "Wall plugs",
          "Cable ties", "Glue stick", "Masking tape", "Drill bits", "Brushes", "Door handles"]
# fmt: on
_CELL = re.compile(r"^([A-F])([1-9][0-9]?)$")
_CENT = Decimal("0.01")
_SUMMARY = ("Subtotal", "Tax", "Total")
# Difficulty levels: (range of product lines, fewest broken line totals, summary rows, whether
# the intro shows the sheet, turn budget). The top level is the original task; level 0 is two
# lines and a Total, a 3-call episode.
LEVELS = [
    ((2, 2), 1, ("Total",), True, 5),
    ((2, 2), 1, _SUMMARY, True, 8),
    ((3, 3), 2, _SUMMARY, False, 14),
    ((4, 4), 2, _SUMMARY, False, 20),
    ((4, 6), 2, _SUMMARY, False, 25),
]


def _level(options) -> int:
    level = (options or {}).get("difficulty", len(LEVELS) - 1)
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < len(LEVELS):
        raise ValueError(f"difficulty must be an int in [0, {len(LEVELS) - 1}], got {level!r}")
    return level


def _cents(value):
    return Decimal(value).quantize(_CENT, rounding=ROUND_HALF_UP)


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


class SpreadsheetAuditEnv:
    difficulty_levels = len(LEVELS)
    metadata = {
        "kind": "tool_use",
        "split": "train",
        "skill": "calculation",
        "difficulty": "easy",
        "hint": "Read the whole sheet, notes column included, before editing. Recompute every "
        "computed cell yourself from the protected inputs, in dependency order: each product row "
        "first, applying the discount only where the notes say it applies and rounding to "
        "cents, then each summary row from the rows above it. Use the checker to confirm "
        "before submitting.",
    }
    tools = [
        _tool(
            "read_range",
            "Read a rectangle of cells, e.g. 'A1:D9', or one cell, e.g. 'F1'.",
            cells=("string", "A cell or a range 'A1:D9' (columns A-F)."),
        ),
        _tool(
            "set_cell",
            "Write a number into a computed cell (column D).",
            cell=("string", "e.g. 'D4'."),
            value=("number", "The new value."),
        ),
        _tool("check_sheet", "Count how many computed cells are currently wrong."),
        _tool("submit", "Submit the sheet; this ends the episode."),
    ]

    def __init__(self, max_turns: int | None = None):
        self._turns_given = max_turns
        self.max_turns = max_turns or LEVELS[-1][-1]
        self._rng = random.Random()

    # -- episode setup ---------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        self.level = _level(options)
        lines, self.fewest_broken, self.summary, self.shown, turns = LEVELS[self.level]
        self.max_turns = self._turns_given or turns
        self._rng = random.Random(seed)
        rng = self._rng
        self.min_qty = rng.choice([5, 6, 8, 10])
        self.discount = rng.choice([5, 10, 15, 20, 25])
        self.tax = rng.choice([5, 6, 8, 10, 12])
        self.lines = self._make_lines(rng.randint(*lines))
        self.cells = {
            "A1": "Item",
            "B1": "Qty",
            "C1": "Unit price",
            "D1": "Line total",
            "F1": self._notes(),
        }
        for row, (item, qty, price) in enumerate(self.lines, start=2):
            self.cells.update({f"A{row}": item, f"B{row}": qty, f"C{row}": float(price)})
        last = len(self.lines) + 1
        for offset, label in enumerate(self.summary, start=1):
            self.cells[f"A{last + offset}"] = label
        self.expected = self._expected_values()
        self._fill_initial_values()
        self.turns, self.finished, self.solved = 0, False, False
        rows = last + len(self.summary)
        intro = (
            f"This invoice sheet (columns A-D, rows 1-{rows}) has wrong or missing "
            f"values in its computed column D (line totals, {', '.join(self.summary)}). Fix "
            "them following the rules written in the notes column F. Columns A-C are "
            "protected. Tools: read_range, set_cell, check_sheet, submit. Call submit "
            "when done; the episode ends then."
        )
        if self.level < len(LEVELS) - 1:
            intro += f" You have {self.max_turns} tool calls."
        if self.shown:
            intro += f"\nThe sheet:\n{self._do_read_range(f'A1:F{rows}')}"
        return intro, {"rows": rows}

    def _make_lines(self, count):
        rng = self._rng
        quantities = [rng.randint(self.min_qty, self.min_qty + 6), rng.randint(1, self.min_qty - 1)]
        quantities += [rng.randint(1, self.min_qty + 6) for _ in range(count - 2)]
        rng.shuffle(quantities)
        items = rng.sample(_ITEMS, count)
        return [
            (item, qty, _cents(Decimal(rng.randint(99, 4999)) / 100))
            for item, qty in zip(items, quantities, strict=True)
        ]

    def _notes(self):
        summary = (
            f"Subtotal = sum of the line totals. Tax = {self.tax}% of Subtotal. Total = "
            "Subtotal + Tax."
            if len(self.summary) == 3
            else "Total = sum of the line totals."
        )
        return (
            f"NOTES: Line total = Qty x Unit price, but any line with Qty of {self.min_qty} "
            f"or more gets {self.discount}% off its line total. {summary} Round every "
            "computed value to cents (half up)."
        )

    def _expected_values(self):
        expected, row = {}, 2
        for _, qty, price in self.lines:
            share = Decimal(100 - self.discount) / 100 if qty >= self.min_qty else Decimal(1)
            expected[f"D{row}"] = _cents(qty * price * share)
            row += 1
        subtotal = sum(expected.values())
        if len(self.summary) == 1:  # a lone Total row
            return {**expected, f"D{row}": subtotal}
        tax = _cents(subtotal * self.tax / 100)
        expected.update({f"D{row}": subtotal, f"D{row + 1}": tax, f"D{row + 2}": subtotal + tax})
        return expected

    def _fill_initial_values(self):
        """Line totals: some right, some blank, some with a slip; the summary rows are wrong."""
        rng = self._rng
        line_cells = sorted(self.expected, key=lambda c: int(c[1:]))[: len(self.lines)]
        broken = set(rng.sample(line_cells, rng.randint(self.fewest_broken, len(line_cells) - 1)))
        for cell in line_cells:
            value = self.expected[cell]
            if cell in broken and rng.random() < 0.5:
                continue  # left blank
            if cell in broken:
                value = _cents(value * Decimal(rng.choice(["1.1", "0.9", "2", "0.5"])))
            self.cells[cell] = float(value)
        subtotal_cell = f"D{len(self.lines) + 2}"
        self.cells[subtotal_cell] = float(
            sum(Decimal(str(self.cells.get(c, 0))) for c in line_cells)
        )

    # -- tools -----------------------------------------------------------------------------
    @staticmethod
    def _show(value):
        if value is None:
            return "(blank)"
        return f"{value:.2f}" if isinstance(value, float) else str(value)

    def _do_read_range(self, cells):
        corners = [_CELL.match(part.strip().upper()) for part in cells.split(":")]
        if not 1 <= len(corners) <= 2 or not all(corners):
            return "Error: give a cell like 'B3' or a range like 'A1:D9' (columns A-F)."
        (c1, r1), (c2, r2) = corners[0].groups(), corners[-1].groups()
        first_col, last_col = sorted((c1, c2))
        columns = "ABCDEF"["ABCDEF".index(first_col) : "ABCDEF".index(last_col) + 1]
        rows = range(min(int(r1), int(r2)), max(int(r1), int(r2)) + 1)
        if len(columns) * len(rows) > 80:
            return "Error: read at most 80 cells at a time."
        shown = [
            [
                f"{col}{row}"
                for col in columns
                if f"{col}{row}" in self.cells or col == "D" or len(cells.split(":")) == 1
            ]
            for row in rows
        ]
        return (
            "\n".join(
                ", ".join(f"{ref}={self._show(self.cells.get(ref))}" for ref in line)
                for line in shown
                if line
            )
            or "(all blank)"
        )

    def _do_set_cell(self, cell, value):
        cell = cell.strip().upper()
        if cell not in self.expected:
            last = len(self.lines) + 1 + len(self.summary)
            return f"Error: {cell} is not a computed cell; only D2-D{last} can be set."
        if not math.isfinite(value):
            return "Error: the value must be a finite number."
        self.cells[cell] = float(value)
        return f"{cell} = {self._show(float(value))}"

    def _do_check_sheet(self):
        wrong = len(self.expected) - sum(self._conditions())
        return f"{wrong} of {len(self.expected)} computed cells are wrong."

    def _do_submit(self):
        self.finished = True
        met = self._conditions()
        self.solved = all(met)
        if self.solved:
            return "The invoice checks out. Well done!"
        return f"Submitted with {sum(met)} of {len(met)} computed cells correct."

    # -- goal ------------------------------------------------------------------------------
    def _conditions(self):
        """Each computed cell holds its expected value, to within a cent of rounding."""
        return [
            isinstance(self.cells.get(cell), float)
            and abs(self.cells[cell] - float(value)) < 0.0101
            for cell, value in sorted(self.expected.items())
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
        rows = len(self.lines) + 1 + len(self.summary)
        calls = [] if self.shown else [("read_range", {"cells": f"A1:F{rows}"})]
        calls += [
            ("set_cell", {"cell": cell, "value": float(value)})
            for cell, value in sorted(self.expected.items(), key=lambda kv: int(kv[0][1:]))
            if self.cells.get(cell) != float(value)
        ]
        if not self.shown:  # the shortest levels skip the check
            calls.append(("check_sheet", {}))
        calls.append(("submit", {}))
        return [json.dumps({"name": name, "arguments": args}) for name, args in calls]

    def close(self):
        pass
