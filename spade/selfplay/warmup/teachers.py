"""Who plays the warm-start episodes of each seed env, and why that teacher is honest.

A teacher is one of three kinds:

- `solution`: the env's `solution()` replayed after `reset(seed)`. Only where the
  observations determine every action: the task text shows everything (a given reaction,
  program, array, map or board), so nothing is taught that the agent could not infer.
- `scripted:<name>`: a non-privileged policy for hidden-information envs. It is a
  `Script`: a generator that gets the first observation, yields `Move`s and is sent each
  move's observation. It never sees the env, so it cannot call `solution()` or `state()`
  or read hidden attributes; the builder replays it over the observation history
  (`policy_of`), so a teacher is a plain `(History) -> Move` function.
- `explore`: well-formed random commands in the env's own format
  (`spade.suites.random_agent.RandomAgent`) and the env's real feedback, for an env no
  teacher here knows (a new env class).

| env | teacher | why |
|---|---|---|
| BalanceReactionEnv | solution | the equation shown fixes the coefficients |
| BattleshipEnv | scripted:battleship | fleet hidden: density hunt, then follow hits |
| BillPaymentEnv | scripted:bill_payment | reads bills, balances; moves the shortfall |
| BooleanFunctionEnv | scripted:boolean_function | queries all 16 rows; minimal sum of products |
| BubbleSortTraceEnv | solution | the array shown fixes every pass |
| BugHuntEnv | solution | code and spec shown: the bugs can be read off |
| CappedNimEnv | scripted:capped_nim | solution() foresees the opponent; nim-sums |
| CodeBreakerEnv | scripted:code_breaker | code hidden: guesses a code fitting all pegs |
| EmailTriageEnv | scripted:email_triage | reads memo, each email; files by first rule |
| FileOrganizerEnv | scripted:file_organizer | solution() reads no file; this reads all |
| FogMazeEnv | scripted:fog_maze | maze hidden: new doorways, else backtrack |
| HaggleEnv | scripted:haggle | limits hidden: raise after insults, repeat |
| HiddenGraphPathEnv | scripted:hidden_graph_path | graph hidden: Dijkstra over expanded edges |
| HiddenModulusEnv | scripted:hidden_modulus | m hidden: a multiple of m, then one below it |
| HiddenNumberEnv | scripted:hidden_number | number hidden: binary search |
| HiddenPolynomialEnv | scripted:hidden_polynomial | f hidden: f(-1), f(0), f(1) give a, b, c |
| HiddenRecurrenceEnv | scripted:hidden_recurrence | rule hidden: four terms give P and Q |
| HighLowEnv | scripted:high_low | deck hidden: counts unseen cards, skips ties |
| KeyDungeonEnv | solution | rooms, locks and keys are all shown |
| LibraryLoansEnv | scripted:library_loans | reads record, due dates, catalogue first |
| LightsOutEnv | scripted:lights_out | solution() replays the scramble; GF(2) solve |
| MeetingSchedulerEnv | scripted:meeting_scheduler | reads every calendar and room, then books |
| MinesweeperEnv | solution | logic-solvable; reveals in deduction order |
| ProjectPlannerEnv | scripted:project_planner | walks dependencies back from the release |
| RestaurantSeatingEnv | scripted:restaurant_seating | reads parties, tables; backtracking match |
| ShoppingBudgetEnv | scripted:shopping_budget | reads products, coupons; cheapest valid cart |
| SlidingPuzzleEnv | solution | the board shown; A* from it |
| SmartHomeEnv | scripted:smart_home | effects hidden: measures, then plans to cap |
| SortedArraySearchEnv | scripted:sorted_array_search | array hidden: binary search on indices |
| SpreadsheetAuditEnv | scripted:spreadsheet_audit | reads sheet and notes; recomputes column D |
| SpringLabEnv | scripted:spring_lab | k, L0 hidden: two far-apart masses, a line |
| StackMachineTraceEnv | solution | the program shown fixes every checkpoint |
| TwentyQuestionsEnv | scripted:twenty_questions | animal hidden: asks the most even split |
| WarehouseOrdersEnv | scripted:warehouse_orders | reads orders and stock; buys only the gap |
"""

from __future__ import annotations

import datetime
import itertools
import json
import math
import re
from collections import deque
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Any, Literal

from spade.envs.random_agent import RandomAgent, agent_seed
from spade.envs.tools import tool_call_action

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


# -- moves, histories, teachers ---------------------------------------------------------------
@dataclass(frozen=True)
class Say:
    """A text env's command (what goes inside `\\boxed{...}`), after an optional short reason
    that the observations so far justify."""

    command: str
    reason: str = ""


@dataclass(frozen=True)
class Call:
    """A tool env's action: one tool call."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


Move = Say | Call


def reply_text(move: Move) -> str:
    """The assistant reply that carries `move`, in the format the RL agent writes."""
    if isinstance(move, Call):
        return tool_call_action(move.name, move.arguments)
    box = "\\boxed{" + move.command + "}"
    return f"{move.reason} {box}" if move.reason else box


def move_of_action(action: str, tools: list[dict[str, Any]] | None) -> Move:
    """The move an action string stands for (a `solution()` or random action)."""
    if tools:
        call = json.loads(action)
        return Call(call["name"], call.get("arguments") or {})
    found = _BOXED.findall(action)
    if not found:
        raise TeacherError(f"action {action[:80]!r} has no \\boxed{{...}} command")
    return Say(found[-1])


@dataclass(frozen=True)
class History:
    """What the agent has seen and done: `observations[0]` is the first observation, and
    `observations[i + 1]` is what the env answered to `moves[i]`."""

    observations: tuple[str, ...]
    moves: tuple[Move, ...] = ()

    def then(self, move: Move, observation: str) -> History:
        return History((*self.observations, observation), (*self.moves, move))


Script = Callable[[str], Generator[Move, str, None]]
"""A scripted teacher: first observation in, moves out, each move's observation sent back."""

Policy = Callable[[History], Move]


class TeacherError(RuntimeError):
    """A teacher could not read an observation or has no move left."""


def policy_of(script: Script) -> Policy:
    """The script as a function of the history: it is replayed over the history's
    observations (so it holds no state between turns) and must repeat its earlier moves."""

    def policy(history: History) -> Move:
        run = script(history.observations[0])
        try:
            move = next(run)
            for index, observation in enumerate(history.observations[1:]):
                if move != history.moves[index]:
                    raise TeacherError(f"replay of turn {index} gave {move}, not the played move")
                move = run.send(observation)
        except StopIteration:
            raise TeacherError(
                f"the script has no move for turn {len(history.moves)}: its plan ended "
                "before the episode did"
            ) from None
        finally:
            run.close()
        return move

    return policy


TeacherKind = Literal["solution", "scripted", "explore"]


@dataclass(frozen=True)
class Teacher:
    name: str
    """`solution`, `scripted:<name>` or `explore`."""
    why: str
    script: Script | None = None

    @property
    def kind(self) -> TeacherKind:
        if self.name == "solution":
            return "solution"
        return "explore" if self.name == "explore" else "scripted"

    def policy(self, seed: int, tools: list[dict[str, Any]] | None) -> Policy:
        """The move function of a scripted or explore teacher for the episode on `seed`."""
        if self.script is not None:
            return policy_of(self.script)
        if self.kind == "explore":
            return policy_of(_explore_script(seed, tools))
        raise TeacherError(f"teacher {self.name} replays solution(); it has no policy")


def _explore_script(seed: int, tools: list[dict[str, Any]] | None) -> Script:
    def script(first: str) -> Generator[Move, str, None]:
        agent = RandomAgent(agent_seed(seed), tools)
        agent.begin(first)
        while True:
            yield move_of_action(agent.act(), tools)

    return script


# -- reading observations -----------------------------------------------------------------------
def _find(pattern: str, text: str, flags: int = 0) -> re.Match[str]:
    match = re.search(pattern, text, flags)
    if match is None:
        raise TeacherError(f"expected /{pattern}/ in the observation {text[:160]!r}")
    return match


def _number(pattern: str, text: str) -> int:
    return int(_find(pattern, text).group(1))


def _cents(text: str) -> int:
    """'$1,234.56' or '1234.56' as cents."""
    return int(Decimal(text.replace("$", "").replace(",", "")) * 100)


def _dollars(cents: int) -> float:
    return float(Decimal(cents) / 100)


def _shown_or_read(first: str, shown: str, call: Call) -> Generator[Move, str, str]:
    """The first observation where it matches `shown`, else what `call` answers. The lower
    levels print the state in the first observation and allow fewer tool calls: reading it
    again would spend calls the episode needs to finish."""
    if re.search(shown, first, re.MULTILINE):
        return first
    return (yield call)


# -- text envs: search and induction ------------------------------------------------------------
def hidden_number(first: str) -> Generator[Move, str, None]:
    lo, hi = 1, _number(r"between 1 and (\d+)", first)
    reason = f"It is in 1-{hi}, so I guess the middle."
    while True:
        guess = (lo + hi) // 2
        observation = yield Say(str(guess), reason)
        feedback = re.search(rf"\b{guess} is too (low|high)", observation)
        if feedback and feedback.group(1) == "low":
            lo = guess + 1
        elif feedback:
            hi = guess - 1
        reason = f"{guess} was too {feedback.group(1)}, so it is in {lo}-{hi}." if feedback else ""


def sorted_array_search(first: str) -> Generator[Move, str, None]:
    lo, hi = 0, _number(r"indices 0 to (\d+)", first)
    target = _number(r"index of the value (-?\d+)", first)
    reason = f"{target} can be at any index in 0-{hi}; I read the middle."
    while True:
        mid = (lo + hi) // 2
        observation = yield Say(f"get {mid}", reason)
        value = _number(rf"Index {mid} holds (-?\d+)", observation)
        if value == target:
            yield Say(f"answer {mid}", f"Index {mid} holds {target}.")
            return
        lo, hi = (mid + 1, hi) if value < target else (lo, mid - 1)
        side = "smaller" if value < target else "larger"
        reason = f"{value} is {side} than {target}, so the index is in {lo}-{hi}."


def hidden_modulus(first: str) -> Generator[Move, str, None]:
    top = _number(r"0 <= X <= (\d+)", first)
    observation = yield Say(f"mod {top}", "X minus its remainder is a multiple of m.")
    multiple = top - _number(rf"{top} mod m = (\d+)", observation)
    observation = yield Say(
        f"mod {multiple - 1}", f"{multiple} is a multiple of m; one below it leaves m-1."
    )
    remainder = _number(rf"{multiple - 1} mod m = (\d+)", observation)
    yield Say(f"answer {remainder + 1}", f"The remainder {remainder} is m-1.")


def hidden_polynomial(first: str) -> Generator[Move, str, None]:
    values: dict[int, int] = {}
    for x in (-1, 0, 1):
        reason = "Three points fix a quadratic; I evaluate -1, 0 and 1." if x == -1 else ""
        observation = yield Say(f"eval {x}", reason)
        values[x] = _number(rf"f\({x}\) = (-?\d+)", observation)
    c = values[0]
    a = (values[1] + values[-1]) // 2 - c
    b = (values[1] - values[-1]) // 2
    yield Say(f"answer {a} {b} {c}", f"So c=f(0)={c}, a={a}, b={b}.")


def hidden_recurrence(first: str) -> Generator[Move, str, None]:
    target = _number(r"V = a\((\d+)\)", first)
    terms: list[int] = []
    for k in range(4):
        reason = "Four terms give two equations for P and Q." if k == 0 else ""
        observation = yield Say(f"term {k}", reason)
        terms.append(_number(rf"a\({k}\) = (-?\d+)", observation))
    a0, a1, a2, a3 = terms
    det = a1 * a1 - a0 * a2
    if det == 0:
        raise TeacherError(f"terms {terms} do not identify P and Q")
    p, q = Fraction(a2 * a1 - a0 * a3, det), Fraction(a1 * a3 - a2 * a2, det)
    sequence = [Fraction(t) for t in terms]
    while len(sequence) <= target:
        sequence.append(p * sequence[-1] + q * sequence[-2])
    value = sequence[target]
    yield Say(f"answer {p} {q} {value}", f"Solving for P, Q, then running to a({target}):")


def spring_lab(first: str) -> Generator[Move, str, None]:
    bounds = _find(r"whole number, (\d+) to (\d+)\)", first)
    light, heavy = int(bounds.group(1)), int(bounds.group(2))
    g = float(_find(r"g = ([\d.]+)", first).group(1))
    observation = yield Say(f"hang {light}", "Far-apart masses keep rounding error small.")
    short = _number(rf"With {light} g hanging, the spring is (\d+) mm", observation)
    observation = yield Say(f"hang {heavy}")
    long = _number(rf"With {heavy} g hanging, the spring is (\d+) mm", observation)
    k = g * (heavy - light) / (long - short)  # grams over millimetres: kg/m
    rest = short - g * light / k
    yield Say(f"answer {k:.2f} {rest:.1f}", "The slope gives k; the line at 0 g gives L0.")


def twenty_questions(first: str) -> Generator[Move, str, None]:
    table = {
        name: set(attributes.split(", "))
        for name, attributes in re.findall(r"^([a-z]+): ([a-z, ]+)$", first, re.MULTILINE)
    }
    attributes = _find(r"ATTRIBUTE is one of: ([a-z, ]+)\.", first).group(1).split(", ")
    turns = _number(r"(\d+) turns in total", first)
    candidates = sorted(table)
    for _ in range(turns - 1):
        if len(candidates) <= 1:
            break

        def imbalance(attribute: str, candidates: list[str] = candidates) -> int:
            return abs(2 * sum(attribute in table[c] for c in candidates) - len(candidates))

        best = min(attributes, key=imbalance)
        have = sum(best in table[c] for c in candidates)
        if have in (0, len(candidates)):
            break  # no question tells these apart
        observation = yield Say(f"ask {best}", f"{have} of {len(candidates)} left are {best}.")
        yes = _find(rf"{best}\? (Yes|No)", observation).group(1) == "Yes"
        candidates = [c for c in candidates if (best in table[c]) == yes]
    if not candidates:
        raise TeacherError("no animal fits the answers")
    only = "Only" if len(candidates) == 1 else f"Of {len(candidates)} left,"
    yield Say(f"guess {candidates[0]}", f"{only} the {candidates[0]} fits every answer.")


def _pegs(guess: str, code: str, colours: str) -> tuple[int, int]:
    exact = sum(g == c for g, c in zip(guess, code, strict=True))
    common = sum(min(guess.count(col), code.count(col)) for col in colours)
    return exact, common - exact


def code_breaker(first: str) -> Generator[Move, str, None]:
    colours = "".join(_find(r"colours ([A-Z, ]+?) \(", first).group(1).split(", "))
    length = _number(r"code of (\d+) pegs", first)
    candidates = ["".join(p) for p in itertools.product(colours, repeat=length)]
    # Two colours in blocks first (the hint's opening), then always a still-possible code.
    guess = (colours[0] * (length // 2) + colours[1] * length)[:length]
    reason = "I open with two colours in blocks."
    while True:
        observation = yield Say(guess, reason)
        feedback = re.search(rf"{guess}: exact (\d+), colour-only (\d+)", observation)
        if feedback is None:
            continue
        pegs = (int(feedback.group(1)), int(feedback.group(2)))
        candidates = [c for c in candidates if _pegs(guess, c, colours) == pegs]
        if not candidates:
            raise TeacherError("no code fits the feedback")
        guess = candidates[0]
        reason = f"{len(candidates)} codes fit all feedback; I try one."


def high_low(first: str) -> Generator[Move, str, None]:
    top = _number(r"cards 1 to (\d+)", first)
    skips = _number(r"\((\d+) skips? available\)", first)  # level 0: "1 skip available"
    seen = [_number(r"The first card is (\d+)", first)]
    while True:
        current = seen[-1]
        unseen = [v for v in range(1, top + 1) if v not in seen]
        above = sum(v > current for v in unseen)
        below = len(unseen) - above
        odds = f"Unseen: {above} higher, {below} lower"
        if skips and max(above, below) <= 0.6 * len(unseen):
            call, reason = "skip", f"{odds}: close to a coin flip, so I skip."
        else:
            call = "higher" if above >= below else "lower"
            reason = f"{odds}, so {call}."
        observation = yield Say(call, reason)
        card = re.search(r"(?:The card is|the next card is) (\d+)", observation)
        if card:
            seen.append(int(card.group(1)))
            skips -= call == "skip"


# -- text envs: games on a board ----------------------------------------------------------------
Cell = tuple[int, int]


def _grid(observation: str, row_names: str, marks: str) -> dict[Cell, str]:
    """The last rendering of a lettered or numbered grid in the observation."""
    pattern = rf"^([{row_names}]) ([{re.escape(marks)}]+)$"
    rows = re.findall(pattern, observation, re.MULTILINE)
    if not rows:
        raise TeacherError(f"no grid in the observation {observation[:160]!r}")
    return {(row_names.index(r), c): mark for r, line in rows for c, mark in enumerate(line)}


def _around(cell: Cell, size: int, diagonal: bool) -> list[Cell]:
    steps = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    if diagonal:
        steps += [(-1, -1), (-1, 1), (1, -1), (1, 1)]
    r, c = cell
    return [(r + dr, c + dc) for dr, dc in steps if 0 <= r + dr < size and 0 <= c + dc < size]


def _components(cells: set[Cell], size: int) -> list[set[Cell]]:
    left, parts = set(cells), []
    while left:
        stack, part = [min(left)], set()
        while stack:
            cell = stack.pop()
            if cell in left:
                left.discard(cell)
                part.add(cell)
                stack += [n for n in _around(cell, size, False) if n in left]
        parts.append(part)
    return parts


def _ship_density(size: int, lengths: list[int], allowed: set[Cell]) -> dict[Cell, int]:
    """How many placements of the remaining ships cover each cell, within `allowed`."""
    density = dict.fromkeys(allowed, 0)
    for length in lengths:
        for r, c in itertools.product(range(size), repeat=2):
            for dr, dc in ((0, 1), (1, 0)):
                cells = [(r + dr * i, c + dc * i) for i in range(length)]
                if all(x in allowed for x in cells):
                    for x in cells:
                        density[x] += 1
    return density


def battleship(first: str) -> Generator[Move, str, None]:
    size = _number(r"on an (\d+)x\d+ grid", first)
    fleet = [int(n) for n in _find(r"lengths ([\d, ]+) lie", first).group(1).split(", ")]
    rows = "ABCDEFGHIJKLMNOP"[:size]
    sunk: list[Cell] = []
    observation = first
    while True:
        grid = _grid(observation, rows, ".Xo")
        hits = {cell for cell, mark in grid.items() if mark == "X"}
        ships = _components(hits, size)
        done = [ship for ship in ships if ship & set(sunk)]
        remaining = list(fleet)
        for ship in done:
            if len(ship) in remaining:
                remaining.remove(len(ship))
        # Ships are straight and never touch: no ship cell is diagonal to a hit or next to
        # a sunk ship.
        diagonal = {
            n
            for hit in hits
            for n in _around(hit, size, True)
            if n not in _around(hit, size, False)
        }
        empty = diagonal | {n for ship in done for cell in ship for n in _around(cell, size, True)}
        unknown = {cell for cell, mark in grid.items() if mark == "." and cell not in empty}
        open_hits = [ship for ship in ships if ship not in done]
        density = _ship_density(size, remaining, unknown | set().union(*open_hits))
        options, reason = sorted(unknown), ""
        if open_hits:
            ship = sorted(open_hits, key=min)[0]
            line = sorted(ship)
            if len(ship) > 1 and line[0][0] == line[-1][0]:
                ends = [(line[0][0], line[0][1] - 1), (line[0][0], line[-1][1] + 1)]
            elif len(ship) > 1:
                ends = [(line[0][0] - 1, line[0][1]), (line[-1][0] + 1, line[0][1])]
            else:
                ends = _around(line[0], size, False)
            near = sorted(cell for cell in ends if cell in unknown)
            if near:
                hit = f"{rows[line[0][0]]}{line[0][1] + 1}"
                options, reason = near, f"{hit} is a hit; I fire along its ship."
        if not options:
            raise TeacherError("no cell is left to fire at")
        target = max(options, key=lambda cell: (density.get(cell, 0), -cell[0], -cell[1]))
        name = f"{rows[target[0]]}{target[1] + 1}"
        reason = reason or f"{name} lies under the most possible ship positions."
        observation = yield Say(name, reason)
        if re.search(rf"\b{name}: hit and sunk", observation):
            sunk.append(target)


_MAZE_MOVES = {"north": (-1, 0), "south": (1, 0), "west": (0, -1), "east": (0, 1)}


def _maze_room(observation: str) -> tuple[Cell, list[str]]:
    found = re.findall(r"You are at \(row (\d+), col (\d+)\)\. Doorways: ([a-z, ]*)\.", observation)
    if not found:
        raise TeacherError(f"no room description in {observation[:160]!r}")
    row, col, doors = found[-1]
    return (int(row), int(col)), [d for d in doors.split(", ") if d]


def _step(cell: Cell, direction: str) -> Cell:
    dr, dc = _MAZE_MOVES[direction]
    return cell[0] + dr, cell[1] + dc


def _distance(a: Cell, b: Cell) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def fog_maze(first: str) -> Generator[Move, str, None]:
    exit_match = _find(r"exit at \(row (\d+), col (\d+)\)", first)
    goal = (int(exit_match.group(1)), int(exit_match.group(2)))
    doors: dict[Cell, list[str]] = {}
    observation = first
    while True:
        here, doors[here] = _maze_room(observation)
        fresh = [d for d in doors[here] if _step(here, d) not in doors]
        if fresh:
            direction = min(fresh, key=lambda d: _distance(_step(here, d), goal))
            reason = f"The {direction} doorway leads somewhere new, toward the exit."
        else:
            direction = _back_to_frontier(here, doors)
            reason = "Everything here is explored; I head back to an unexplored doorway."
        observation = yield Say(direction, reason)


def _back_to_frontier(start: Cell, doors: dict[Cell, list[str]]) -> str:
    """First move of a shortest known path to a visited room with an unexplored doorway."""
    first_move: dict[Cell, str] = {start: ""}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if any(_step(cell, d) not in doors for d in doors[cell]):
            return first_move[cell]
        for direction in doors[cell]:
            nxt = _step(cell, direction)
            if nxt not in first_move:
                first_move[nxt] = first_move[cell] or direction
                queue.append(nxt)
    raise TeacherError("the whole maze is explored and the exit was not found")


def haggle(first: str) -> Generator[Move, str, None]:
    ask = _number(r"asking \$(\d+)", first)
    budget = _number(r"spend at most \$(\d+)", first)
    listed = ask
    # Opening offers, raised after each insult; the last is safely above any insult line
    # a seller could hold (or is the whole budget).
    trials = [min(budget, round(listed * share)) for share in (0.5, 0.58, 0.64)]
    tolerated: int | None = None
    while True:
        if ask <= budget:
            yield Say("accept", f"His ask of ${ask} fits my ${budget} budget.")
            return
        if tolerated is not None:
            offer, reason = tolerated, f"He asks ${ask}; I repeat ${tolerated} to pull him down."
        else:
            offer = trials.pop(0) if trials else budget
            reason = f"He asks ${ask}, above my ${budget}; I try ${offer}."
        observation = yield Say(f"offer {offer}", reason)
        counter = re.search(r"let it go for \$(\d+)", observation)
        if counter:
            ask, tolerated = int(counter.group(1)), offer


def capped_nim(first: str) -> Generator[Move, str, None]:
    cap = _number(r"take between 1 and (\d+) objects", first)
    observation = first
    while True:
        heaps = [
            int(n) for _, n in re.findall(r"heap (\d+): (\d+)", observation.split("Heaps:")[-1])
        ]
        if not heaps:
            raise TeacherError(f"no heaps in {observation[:160]!r}")
        total = _nim_sum(heaps, cap)
        moves = [(h, k) for h, n in enumerate(heaps) for k in range(1, min(n, cap) + 1)]
        winning = [
            (h, k)
            for h, k in moves
            if _nim_sum([n - k if i == h else n for i, n in enumerate(heaps)], cap) == 0
        ]
        heap, count = (winning or moves)[0]
        reason = (
            f"Heaps mod {cap + 1} XOR to {total}; this leaves XOR 0."
            if winning
            else "No move wins here; I take one."
        )
        observation = yield Say(f"take {count} from {heap + 1}", reason)


def _nim_sum(heaps: list[int], cap: int) -> int:
    total = 0
    for n in heaps:
        total ^= n % (cap + 1)
    return total


def lights_out(first: str) -> Generator[Move, str, None]:
    size = _number(r"on a (\d+)x\d+ grid", first)
    observation = first
    while True:
        rows = re.findall(r"^(\d+) ([O.](?: [O.])*)$", observation, re.MULTILINE)[-size:]
        lit = {
            (int(r) - 1, c)
            for r, line in rows
            for c, mark in enumerate(line.split())
            if mark == "O"
        }
        presses = _lights_presses(lit, size)
        if not presses:
            raise TeacherError("the board is already dark or cannot be cleared")
        r, c = presses[0]
        reason = f"{len(presses)} presses switch every light off; next ({r + 1}, {c + 1})."
        observation = yield Say(f"{r + 1} {c + 1}", reason)


def _lights_presses(lit: set[Cell], size: int) -> list[Cell]:
    """A fewest-press set of cells that switches every light off (Gaussian elimination over
    GF(2), then the best combination of the null space), sorted."""
    cells = [(r, c) for r in range(size) for c in range(size)]
    index = {cell: i for i, cell in enumerate(cells)}
    n = len(cells)
    # Row i: which presses toggle cell i (bits 0..n-1) and whether it is lit (bit n).
    rows = []
    for cell in cells:
        mask = 1 << index[cell]
        for neighbour in _around(cell, size, False):
            mask |= 1 << index[neighbour]
        rows.append(mask | (int(cell in lit) << n))
    pivots: list[int] = []
    rank = 0
    for column in range(n):
        pivot = next((i for i in range(rank, n) if rows[i] >> column & 1), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for i in range(n):
            if i != rank and rows[i] >> column & 1:
                rows[i] ^= rows[rank]
        pivots.append(column)
        rank += 1
    if any(rows[i] >> n & 1 for i in range(rank, n)):
        return []
    free = [column for column in range(n) if column not in pivots]
    best: list[Cell] | None = None
    for choice in itertools.product((0, 1), repeat=len(free)):
        x = dict(zip(free, choice, strict=True))
        for i, column in enumerate(pivots):
            # Reduced form: row i holds its pivot and free columns only.
            bit = rows[i] >> n & 1
            for other in free:
                bit ^= x[other] & (rows[i] >> other & 1)
            x[column] = bit
        presses = sorted(cells[column] for column, bit in x.items() if bit)
        if best is None or len(presses) < len(best):
            best = presses
    return best or []


# -- text envs: logic ---------------------------------------------------------------------------
def boolean_function(first: str) -> Generator[Move, str, None]:
    names = _find(r"function f\(([a-z, ]+)\)", first).group(1).split(", ")
    ones: list[int] = []
    for index, row in enumerate(itertools.product("01", repeat=len(names))):
        bits = "".join(row)
        reason = "I query every row in order." if index == 0 else ""
        observation = yield Say(f"query {bits}", reason)
        if _find(r"\) = ([01])", observation).group(1) == "1":
            ones.append(index)
    yield Say(f"answer {_sum_of_products(ones, names)}")  # the formula is long enough


def _sum_of_products(ones: list[int], names: list[str]) -> str:
    """A fewest-term OR of ANDs that is 1 exactly on `ones` (Quine-McCluskey, exact cover)."""
    width = len(names)
    if not ones:
        return "0"
    # An implicant is (value, mask): the rows equal to value on every bit outside mask.
    current = {(row, 0) for row in ones}
    primes: set[tuple[int, int]] = set()
    while current:
        merged, used = set(), set()
        for (v1, m1), (v2, m2) in itertools.combinations(sorted(current), 2):
            diff = v1 ^ v2
            if m1 == m2 and diff and not diff & (diff - 1):
                merged.add((v1 & ~diff, m1 | diff))
                used |= {(v1, m1), (v2, m2)}
        primes |= current - used
        current = merged

    def covers(implicant: tuple[int, int]) -> set[int]:
        value, mask = implicant
        return {row for row in ones if row & ~mask == value}

    ordered = sorted(primes, key=lambda p: (-bin(p[1]).count("1"), p))
    chosen: tuple[tuple[int, int], ...] = ()
    for size in range(1, len(ordered) + 1):
        chosen = next(
            (
                combo
                for combo in itertools.combinations(ordered, size)
                if set().union(*map(covers, combo)) == set(ones)
            ),
            (),
        )
        if chosen:
            break
    terms = []
    for value, mask in chosen:
        literals = [
            ("" if value >> (width - 1 - i) & 1 else "~") + name
            for i, name in enumerate(names)
            if not mask >> (width - 1 - i) & 1
        ]
        terms.append("&".join(literals) if literals else "1")
    return "|".join(f"({t})" if "&" in t and len(terms) > 1 else t for t in terms)


def hidden_graph_path(first: str) -> Generator[Move, str, None]:
    ends = _find(r"cheapest route from ([A-Z]) to ([A-Z])", first)
    start, goal = ends.group(1), ends.group(2)
    edges: dict[str, dict[str, int]] = {}
    while True:
        dist, parent = _dijkstra(start, edges)
        open_nodes = [n for n in dist if n not in edges]
        nearest = min(open_nodes, key=lambda n: (dist[n], n), default=None)
        if nearest is None or nearest == goal:
            break  # the goal's distance is final (or nothing is left to expand)
        reason = f"{nearest} is the closest unexpanded node (distance {dist[nearest]})."
        observation = yield Say(f"expand {nearest}", reason)
        listing = _find(rf"^{nearest}: (.*)$", observation, re.MULTILINE).group(1)
        edges[nearest] = {n: int(w) for n, w in re.findall(r"([A-Z]) (\d+)", listing)}
    if goal not in dist:
        raise TeacherError(f"{goal} was never reached from {start}")
    route = [goal]
    while route[-1] != start:
        route.append(parent[route[-1]])
    route.reverse()
    yield Say(
        "path " + " ".join(route), f"Every closer node is expanded; {goal} costs {dist[goal]}."
    )


def _dijkstra(
    start: str, edges: dict[str, dict[str, int]]
) -> tuple[dict[str, int], dict[str, str]]:
    """Distances over the known (expanded) edges, which are undirected."""
    known: dict[str, dict[str, int]] = {}
    for node, links in edges.items():
        for other, weight in links.items():
            known.setdefault(node, {})[other] = weight
            known.setdefault(other, {})[node] = weight
    dist: dict[str, int] = {start: 0}
    parent: dict[str, str] = {}
    done: set[str] = set()
    while True:
        frontier = [n for n in dist if n not in done]
        if not frontier:
            return dist, parent
        node = min(frontier, key=lambda n: (dist[n], n))
        done.add(node)
        for other, weight in sorted(known.get(node, {}).items()):
            if dist[node] + weight < dist.get(other, math.inf):
                dist[other], parent[other] = dist[node] + weight, node


# -- tool envs ----------------------------------------------------------------------------------
_MONEY = r"(\$[\d,]+\.\d\d)"
"""A dollar amount as the envs print it ($1,234.56); the capture excludes a final period."""


def bill_payment(first: str) -> Generator[Move, str, None]:
    listing = yield from _shown_or_read(first, r"^Bills:$", Call("list_bills"))
    rows = re.findall(rf"^(B\d+) .+?: {_MONEY}, (paid|unpaid)\.(.*)$", listing, re.MULTILINE)
    payable = [
        (bill, _cents(amount))
        for bill, amount, status, note in rows
        if status == "unpaid" and "do not pay" not in note
    ]
    checking_text = yield from _shown_or_read(
        first, "Checking balance: ", Call("get_balance", {"account": "checking"})
    )
    checking = _cents(_find(rf"Checking balance: {_MONEY}", checking_text).group(1))
    savings_text = yield from _shown_or_read(
        first, "Savings balance: ", Call("get_balance", {"account": "savings"})
    )
    savings = _cents(_find(rf"Savings balance: {_MONEY}", savings_text).group(1))
    minimum = _cents(_find(rf"Required minimum balance: {_MONEY}", savings_text).group(1))
    fee = _cents(_find(rf"costs a {_MONEY} fee", savings_text).group(1))
    shortfall = sum(amount for _, amount in payable) - checking
    if shortfall > 0 and savings - shortfall - fee >= minimum:
        accounts = {"from_account": "savings", "to_account": "checking"}
        yield Call("transfer", {**accounts, "amount": _dollars(shortfall)})
    for bill, _ in payable:
        yield Call("pay_bill", {"bill_id": bill, "account": "checking"})
    yield Call("finish")


@dataclass(frozen=True)
class _TriageRules:
    vip_address: str
    vip_folder: str
    news_folder: str
    finance_domain: str
    finance_folder: str
    rest_folder: str
    news_first: bool

    def file(self, address: str, body: str) -> str:
        """The folder of the first rule an email matches (the key client's rule is first)."""
        if address.lower() == self.vip_address.lower():
            return self.vip_folder
        text = body.lower()
        news = (self.news_folder, "unsubscribe" in text)
        from_accountant = address.lower().endswith("@" + self.finance_domain.lower())
        finance = (self.finance_folder, from_accountant or "invoice" in text)
        for folder, matches in [news, finance] if self.news_first else [finance, news]:
            if matches:
                return folder
        return self.rest_folder


def _triage_rules(memo: str) -> _TriageRules:
    vip = _find(r"key client .+? <([^>]+)>:.*?then move it to ([^\s.]+)\.", memo)
    news = _find(r"Newsletters \(.*?\) go to ([^\s.]+)\.", memo)
    finance = _find(r"any address @([^\s)]+)\).*? goes to ([^\s.]+)\.", memo)
    rest = _find(r"Everything else goes to ([^\s.]+)\.", memo)
    return _TriageRules(
        vip.group(1),
        vip.group(2),
        news.group(1),
        finance.group(1),
        finance.group(2),
        rest.group(1),
        news.start() < finance.start(),
    )


def email_triage(first: str) -> Generator[Move, str, None]:
    memo_id = _number(r"\(email (\d+)\)", first)
    rules = _triage_rules((yield Call("read_email", {"email_id": memo_id})))
    listing = yield Call("list_emails", {"folder": "Inbox"})
    ids = [int(i) for i in re.findall(r"^(\d+): ", listing, re.MULTILINE) if int(i) != memo_id]
    for email_id in ids:
        text = yield Call("read_email", {"email_id": email_id})
        address = _find(r"^From: .*?<([^>]+)>", text, re.MULTILINE).group(1)
        body = text.split("\n\n", 1)[-1]
        folder = rules.file(address, body)
        if folder == rules.vip_folder:
            code = _find(r"\b(REF-\d+)", body).group(1)
            yield Call("reply", {"email_id": email_id, "body": f"Confirming {code}."})
        yield Call("move_email", {"email_id": email_id, "folder": folder})
    yield Call("finish")


def file_organizer(first: str) -> Generator[Move, str, None]:
    readme_path = _find(r"rules in (/\S+?)\.(?:\s|$)", first).group(1)
    inbox = _find(r"every file in (/\S+?) ", first).group(1)
    readme = yield Call("read_file", {"path": readme_path})
    by_ending = {
        ending: folder
        for endings, folder in re.findall(r"Files ending in (.+?) go to (/\S+?)\.\n", readme)
        for ending in endings.split(" or ")
    }
    other = _find(r"Every other file goes to (/\S+?)\.", readme).group(1)
    marker = _find(r"FIRST line is exactly '([^']+)'", readme).group(1)
    listing = yield Call("list_dir", {"path": inbox})
    names = [n for n in listing.split(": ", 1)[-1].split(", ") if n and not n.endswith("/")]
    for name in names:
        path = f"{inbox}/{name}"
        text = yield Call("read_file", {"path": path})
        first_line = text.split("\n")[1] if "\n" in text else ""
        if first_line.strip() == marker:
            yield Call("delete_file", {"path": path})
        else:
            ending = "." + name.rsplit(".", 1)[-1] if "." in name else ""
            yield Call("move_file", {"path": path, "folder": by_ending.get(ending, other)})
    yield Call("finish")


def library_loans(first: str) -> Generator[Move, str, None]:
    today = datetime.date.fromisoformat(_find(r"Today is (\d{4}-\d\d-\d\d)", first).group(1))
    member = {"member_id": _find(r"\(member (M-\d+)\)", first).group(1)}
    wanted = re.findall(r"'([^']+)'", _find(r"like to borrow: (.*?)\. Policy", first).group(1))
    record = yield Call("get_member", member)
    fine = _cents(_find(rf"Unpaid fines: {_MONEY}\.", record).group(1))
    loans = _find(r"Loans: (.*?)\. Holds:", record).group(1)
    for book, due in re.findall(r"(BK-\d+) '[^']*' due (\d{4}-\d\d-\d\d)", loans):
        if datetime.date.fromisoformat(due) < today:
            returned = yield Call("return_book", {**member, "book_id": book})
            fine = _cents(_find(rf"Fines now {_MONEY}\.", returned).group(1))
    if fine > 0:
        yield Call("pay_fine", {**member, "amount": _dollars(fine)})
    for title in wanted:
        hits = yield Call("search_catalog", {"query": title})
        line = _find(
            rf"^(BK-\d+) '{re.escape(title)}' by .*?: (\d+) of \d+ copies free$", hits, re.MULTILINE
        )
        tool = "checkout" if int(line.group(2)) > 0 else "place_hold"
        yield Call(tool, {**member, "book_id": line.group(1)})
    yield Call("finish")


def _clock_slot(clock: str, opening: int) -> int:
    hours, minutes = clock.split(":")
    return (int(hours) * 60 + int(minutes) - opening) // 30


def _busy_slots(text: str, days: list[str], opening: int) -> dict[str, set[int]]:
    """'X is busy: Mon 09:00-10:30, 13:00-13:30; Tue free' as half-hour slots per day."""
    busy: dict[str, set[int]] = {day: set() for day in days}
    for part in text.split(": ", 1)[-1].rstrip(".").split("; "):
        day, _, ranges = part.partition(" ")
        for start, end in re.findall(r"(\d\d:\d\d)-(\d\d:\d\d)", ranges):
            busy.setdefault(day, set()).update(
                range(_clock_slot(start, opening), _clock_slot(end, opening))
            )
    return busy


def meeting_scheduler(first: str) -> Generator[Move, str, None]:
    task = _find(
        r"Book a (\d+)-minute '.+?' with (.+?) on ([A-Za-z/]+), within "
        r"(\d\d):(\d\d)-(\d\d):(\d\d)",
        first,
    )
    length = int(task.group(1)) // 30
    people, days = task.group(2).split(", "), task.group(3).split("/")
    opening = int(task.group(4)) * 60 + int(task.group(5))
    slots = (int(task.group(6)) * 60 + int(task.group(7)) - opening) // 30
    busy = {}
    for person in people:
        text = yield Call("get_busy_times", {"person": person})
        busy[person] = _busy_slots(text, days, opening)
    rooms = yield Call("list_rooms")
    big = [
        room
        for room, seats in re.findall(r"(\w+) \(seats (\d+)\)", rooms)
        if int(seats) >= len(people)
    ]
    for room in big:
        text = yield Call("get_room_bookings", {"room": room})
        busy[room] = _busy_slots(text, days, opening)
    for day, start, room in itertools.product(days, range(slots - length + 1), big):
        span = set(range(start, start + length))
        if all(not busy[who][day] & span for who in [*people, room]):
            minutes = opening + 30 * start
            clock = f"{minutes // 60:02d}:{minutes % 60:02d}"
            yield Call("create_event", {"day": day, "start": clock, "room": room})
            yield Call("finish")
            return
    raise TeacherError("no slot fits every calendar and a big enough room")


def project_planner(first: str) -> Generator[Move, str, None]:
    release = _find(r"\((T\d+)\)\. You have", first).group(1)
    deps: dict[str, list[str]] = {}
    queue = [release]
    while queue:
        task = queue.pop(0)
        if task in deps:
            continue
        text = yield Call("get_task", {"task_id": task})
        listed = _find(rf"^{task} '.*': \d+ h, depends on (.*?)\. Status", text).group(1)
        deps[task] = [] if listed == "nothing" else listed.split(", ")
        queue += deps[task]
    order: list[str] = []

    def visit(task: str) -> None:
        if task not in order:
            for dep in deps[task]:
                visit(dep)
            order.append(task)

    visit(release)
    for task in order:
        yield Call("complete_task", {"task_id": task})


@dataclass(frozen=True)
class _Party:
    id: str
    seating: str
    size: int
    access: bool
    patio: bool
    indoors: bool


_Tables = dict[str, tuple[int, bool, bool]]
"""Each table's (seats, on the patio, wheelchair accessible)."""


def _tables(text: str) -> _Tables:
    return {
        table: (int(seats), where == "patio", access == "wheelchair accessible")
        for table, seats, where, access in re.findall(
            r"^(T\d+): (\d+) seats, (patio|indoors), (wheelchair accessible|not accessible)$",
            text,
            re.MULTILINE,
        )
    }


def _parties(text: str) -> list[_Party]:
    """The parties of every 'P1 Name, 18:00, party of 4. Notes: ...' line of the text."""
    parties = []
    for party_id, seating, size, notes in re.findall(
        r"^(P\d+) .+?, (\d\d:\d\d), party of (\d+)\. Notes: (.*)$", text, re.MULTILINE
    ):
        wish = notes.lower()
        parties.append(
            _Party(
                party_id,
                seating,
                int(size),
                "wheelchair" in wish,
                "patio" in wish,
                "indoors" in wish,
            )
        )
    return parties


def _read_seating(first: str) -> Generator[Move, str, tuple[_Tables, list[_Party]]]:
    """Tables and parties: from the first observation where it lists them (the lower levels),
    else from the reservation list, the table list and each party's details."""
    if re.search(r"^Reservations:$", first, re.MULTILINE):
        return _tables(first), _parties(first)
    listing = yield Call("list_reservations")
    tables = _tables((yield Call("list_tables")))
    parties: list[_Party] = []
    for party_id in re.findall(r"^(P\d+) ", listing, re.MULTILINE):
        text = yield Call("get_party", {"party_id": party_id})
        found = _parties(text)
        if len(found) != 1:
            raise TeacherError(f"expected one party's details in {text[:160]!r}")
        parties += found
    return tables, parties


def restaurant_seating(first: str) -> Generator[Move, str, None]:
    slack = _number(r"may leave at most (\d+) seats empty", first)
    tables, parties = yield from _read_seating(first)

    def fits(party: _Party, table: str) -> bool:
        seats, patio, access = tables[table]
        return (
            0 <= seats - party.size <= slack
            and (access or not party.access)
            and not (party.patio and not patio)
            and not (party.indoors and patio)
        )

    plan: dict[str, str] = {}
    for seating in dict.fromkeys(p.seating for p in parties):
        group = [p for p in parties if p.seating == seating]
        options = {p.id: [t for t in sorted(tables) if fits(p, t)] for p in group}
        matched = _match(sorted(group, key=lambda p: (len(options[p.id]), p.id)), options, {})
        if matched is None:
            raise TeacherError(f"no seating plan fits the {seating} parties")
        plan.update(matched)
    for party in parties:
        yield Call("assign_table", {"party_id": party.id, "table_id": plan[party.id]})
    yield Call("finish")


def _match(
    parties: list[_Party], options: dict[str, list[str]], taken: dict[str, str]
) -> dict[str, str] | None:
    """Backtracking: a table for every party, no table twice (most constrained first)."""
    if not parties:
        return dict(taken)
    party, rest = parties[0], parties[1:]
    for table in options[party.id]:
        if table not in taken.values():
            found = _match(rest, options, {**taken, party.id: table})
            if found is not None:
                return found
    return None


@dataclass(frozen=True)
class _Product:
    id: str
    category: str
    brand: str
    price: int
    rating: float


def _discount(basket: tuple[_Product, ...], coupon: tuple[str, ...] | None) -> int:
    """The discount (cents) of a coupon as its terms describe it: ('percent', share, floor),
    ('brand', amount, count, brand) or ('featured', amount, category, floor)."""
    subtotal = sum(p.price for p in basket)
    if coupon is None:
        return 0
    kind, amount = coupon[0], int(coupon[1])
    if kind == "percent":
        return (subtotal * amount + 50) // 100 if subtotal >= int(coupon[2]) else 0
    if kind == "brand":
        have = sum(p.brand.lower() == coupon[3].lower() for p in basket)
        return amount * 100 if have >= int(coupon[2]) else 0
    eligible = [p for p in basket if p.category == coupon[2] and p.price >= int(coupon[3])]
    return amount * 100 if eligible else 0


def _coupons(text: str) -> dict[str, tuple[str, ...]]:
    coupons: dict[str, tuple[str, ...]] = {}
    for code, terms in re.findall(r"^(\w+): (.*)\.$", text, re.MULTILINE):
        if m := re.match(
            rf"(\d+)% off the whole order if the subtotal is at least {_MONEY}", terms
        ):
            coupons[code] = ("percent", m.group(1), str(_cents(m.group(2))))
        elif m := re.match(
            r"\$(\d+) off the order if it contains at least (\d+) (\w+) items", terms
        ):
            coupons[code] = ("brand", m.group(1), m.group(2), m.group(3))
        elif m := re.match(
            r"\$(\d+) off the order if it contains an? (.+?) priced at least "
            rf"{_MONEY}",
            terms,
        ):
            coupons[code] = ("featured", m.group(1), m.group(2), str(_cents(m.group(3))))
    return coupons


def shopping_budget(first: str) -> Generator[Move, str, None]:
    categories = _find(r"one item in each category: (.+?)\. Every item", first).group(1).split(", ")
    floor = float(_find(r"rated at least (\d+(?:\.\d+)?)", first).group(1))
    budget = _cents(_find(rf"must not exceed {_MONEY}", first).group(1))
    shelves: list[list[_Product]] = []
    for category in categories:
        text = yield Call("search_products", {"category": category})
        shelves.append(
            [
                _Product(pid, category, name.split()[0], _cents(price), float(rating))
                for pid, name, price, rating in re.findall(
                    rf"^(P\d+): (.+?), {_MONEY}, rated ([\d.]+)$", text, re.MULTILINE
                )
                if float(rating) >= floor
            ]
        )
    coupons = _coupons((yield Call("list_coupons")))
    options = [
        (sum(p.price for p in basket) - _discount(basket, coupons.get(code)), code, basket)
        for basket in itertools.product(*shelves)
        for code in ["", *coupons]
    ]
    if not options:
        raise TeacherError("some category has no product rated high enough")
    total, code, basket = min(options, key=lambda o: (o[0], o[1], [p.id for p in o[2]]))
    if total > budget:
        raise TeacherError(f"the cheapest basket costs {total} cents, over the budget {budget}")
    for product in basket:
        yield Call("add_to_cart", {"product_id": product.id})
    if code:
        yield Call("apply_coupon", {"code": code})
    yield Call("view_cart")
    yield Call("checkout")


def _sensors(text: str) -> dict[str, tuple[int, int]]:
    """Each room's (temperature, light) from a sensor reading."""
    return {
        room: (int(t), int(lux))
        for room, t, lux in re.findall(r"(\w+): (-?\d+) C, (\d+) lux", text)
    }


_Devices = dict[str, tuple[int, int, int]]
"""Each device's (level, top level, watts per level)."""


@dataclass(frozen=True)
class _HomeGoal:
    rooms: list[str]
    temp_range: dict[str, tuple[int, int]]
    lux_range: dict[str, tuple[int, int]]
    cap: int


def _home_goal(first: str) -> _HomeGoal:
    goals = re.findall(r"(\w+): (-?\d+) to (-?\d+) C and (\d+) to (\d+) lux", first)
    return _HomeGoal(
        rooms=[room for room, *_ in goals],
        temp_range={room: (int(lo), int(hi)) for room, lo, hi, _, _ in goals},
        lux_range={room: (int(lo), int(hi)) for room, _, _, lo, hi in goals},
        cap=_number(r"exceeds (\d+) W", first),
    )


def _devices(text: str) -> _Devices:
    return {
        name: (int(level), int(top), int(watts))
        for name, level, top, watts in re.findall(
            r"^(\w+): level (\d+) of (\d+), (\d+) W per level$", text, re.MULTILINE
        )
    }


def _light_levels(
    room: str,
    sun: Fraction,
    lamp: Fraction,
    goal: _HomeGoal,
    devices: _Devices,
    level: dict[str, int],
) -> tuple[int, int]:
    """(blinds, lamps) for the room's light range with the fewest lamp levels (blinds draw
    nothing), moving the blinds least; the current levels if none fits."""
    lo, hi = goal.lux_range[room]
    return min(
        (
            (b, n)
            for b in range(devices[f"blinds_{room}"][1] + 1)
            for n in range(devices[f"lamp_{room}"][1] + 1)
            if lo <= sun * b + lamp * n <= hi
        ),
        key=lambda bn: (bn[1], abs(bn[0] - level[f"blinds_{room}"])),
        default=(level[f"blinds_{room}"], level[f"lamp_{room}"]),
    )


_EFFECTS = (
    r"(\w+) is (-?\d+) C with its heater off; heater_\w+ adds (\d+) C, lamp_\w+ (\d+) lux and "
    r"blinds_\w+ (\d+) lux per level(?:; heater_\w+ also adds (\d+) C per level next door)?"
)


def _smart_home_from_effects(first: str, goal: _HomeGoal) -> Generator[Move, str, None]:
    """The lower levels state every device and effect in the first observation: nothing is
    left to measure, so the plan is set at once (within their smaller call budget)."""
    devices = _devices(first)
    level = {name: spec[0] for name, spec in devices.items()}
    effects = {room: rest for room, *rest in re.findall(_EFFECTS, first)}
    if set(effects) != set(goal.rooms):
        raise TeacherError(f"the stated effects cover {sorted(effects)}, not {goal.rooms}")
    base = {room: int(effects[room][0]) for room in goal.rooms}
    heat = {room: int(effects[room][1]) for room in goal.rooms}
    leak = {room: int(effects[room][4] or 0) for room in goal.rooms}
    target = dict(level)
    for room in goal.rooms:
        lamp, sun = (Fraction(effects[room][i]) for i in (2, 3))
        blinds, lamps = _light_levels(room, sun, lamp, goal, devices, level)
        target[f"blinds_{room}"], target[f"lamp_{room}"] = blinds, lamps
    target.update(_heater_plan(goal, base, heat, leak, devices, target))
    # Lower first, so the draw never passes the final (allowed) one on the way.
    for device, value in sorted(target.items(), key=lambda dv: dv[1] - level[dv[0]]):
        if level[device] != value:
            yield Call("set_device", {"device_id": device, "level": value})
    yield Call("finish")


def smart_home(first: str) -> Generator[Move, str, None]:
    goal = _home_goal(first)
    if re.search(r"^Effects: ", first, re.MULTILINE):
        yield from _smart_home_from_effects(first, goal)
        return
    rooms = goal.rooms
    devices = _devices((yield Call("list_devices")))
    level = {name: spec[0] for name, spec in devices.items()}

    def set_to(device: str, value: int) -> Call:
        level[device] = value
        return Call("set_device", {"device_id": device, "level": value})

    before = _sensors((yield Call("read_sensors")))
    # Experiment 1: open every closed blind one level and switch the first heater on: light
    # then comes from the sun alone, and only the first heater changes temperatures.
    for room in rooms:
        if level[f"blinds_{room}"] == 0:
            yield set_to(f"blinds_{room}", 1)
    yield set_to(f"heater_{rooms[0]}", 1)
    reading = _sensors((yield Call("read_sensors")))
    sun = {room: Fraction(reading[room][1], level[f"blinds_{room}"]) for room in rooms}
    heat, leak = {}, {}
    heat[rooms[0]] = reading[rooms[0]][0] - before[rooms[0]][0]
    if len(rooms) > 1:
        leak[rooms[0]] = reading[rooms[1]][0] - before[rooms[1]][0]
    # Experiment 2: every lamp at level 1.
    for room in rooms:
        yield set_to(f"lamp_{room}", 1)
    lit = _sensors((yield Call("read_sensors")))
    lamp = {room: lit[room][1] - sun[room] * level[f"blinds_{room}"] for room in rooms}
    # Light plan: the fewest lamp levels (blinds draw nothing), set before heating.
    for room in rooms:
        blinds, lamps = _light_levels(room, sun[room], lamp[room], goal, devices, level)
        for device, value in ((f"lamp_{room}", lamps), (f"blinds_{room}", blinds)):
            if level[device] != value:
                yield set_to(device, value)
    # Experiments 3..: each further heater on in turn (its room, and the next room's leak).
    previous = reading
    for i, room in enumerate(rooms[1:], start=1):
        yield set_to(f"heater_{room}", 1)
        reading = _sensors((yield Call("read_sensors")))
        heat[room] = reading[room][0] - previous[room][0]
        if i + 1 < len(rooms):
            leak[room] = reading[rooms[i + 1]][0] - previous[rooms[i + 1]][0]
        previous = reading
    base = {room: temp for room, (temp, _) in before.items()}
    heaters = _heater_plan(goal, base, heat, leak, devices, level)
    # Lower first, so the draw never passes the final (allowed) one on the way.
    for device, value in sorted(heaters.items(), key=lambda dv: dv[1] - level[dv[0]]):
        if level[device] != value:
            yield set_to(device, value)
    yield Call("read_sensors")
    yield Call("finish")


def _heater_plan(
    goal: _HomeGoal,
    base: dict[str, int],
    heat: dict[str, int],
    leak: dict[str, int],
    devices: _Devices,
    level: dict[str, int],
) -> dict[str, int]:
    """Heater levels that put every room in range at the least power within the cap; `base`
    is each room's temperature before any heater was raised."""
    rooms, temp_range, cap = goal.rooms, goal.temp_range, goal.cap
    names = [f"heater_{room}" for room in rooms]
    other = sum(devices[d][2] * v for d, v in level.items() if d not in names)
    best: tuple[int, tuple[int, ...]] | None = None
    for levels in itertools.product(*(range(devices[n][1] + 1) for n in names)):
        power = other + sum(devices[n][2] * v for n, v in zip(names, levels, strict=True))
        temps = [
            base[room] + heat[room] * levels[i] + (leak[rooms[i - 1]] * levels[i - 1] if i else 0)
            for i, room in enumerate(rooms)
        ]
        fits = all(
            temp_range[r][0] <= t <= temp_range[r][1] for r, t in zip(rooms, temps, strict=True)
        )
        if fits and power <= cap and (best is None or (power, levels) < best):
            best = (power, levels)
    if best is None:
        raise TeacherError("no heater levels reach every temperature range within the cap")
    return dict(zip(names, best[1], strict=True))


def _read_orders(first: str) -> Generator[Move, str, tuple[list[str], list[str]]]:
    """The open orders and each one's line text: from the first observation where it shows
    them (the lower levels), else from the order list and each order."""
    shown = re.findall(r"^O-\d+ for .*$", first, re.MULTILINE)
    if shown:
        return re.findall(r"^(O-\d+) for ", first, re.MULTILINE), shown
    listing = yield Call("list_orders")
    orders = re.findall(r"^(O-\d+): .*?, open$", listing, re.MULTILINE)
    texts = []
    for order in orders:
        texts.append((yield Call("get_order", {"order_id": order})))
    return orders, texts


def _stock(first: str, sku: str) -> Generator[Move, str, str]:
    """The product's stock line of the first observation (the lower levels show every
    ordered product's), else what `check_stock` answers."""
    line = re.search(rf"^{sku} .*: \d+ on hand.*$", first, re.MULTILINE)
    if line:
        return line.group(0)
    return (yield Call("check_stock", {"sku": sku}))


def warehouse_orders(first: str) -> Generator[Move, str, None]:
    orders, texts = yield from _read_orders(first)
    demand: dict[str, int] = {}
    for text in texts:
        for quantity, sku in re.findall(r"(\d+) x (SKU-\d+)", text):
            demand[sku] = demand.get(sku, 0) + int(quantity)
    for sku in list(demand):
        text = yield from _stock(first, sku)
        stock = _find(r"(\d+) on hand, of which (\d+) reserved.*?packs of (\d+) at", text)
        on_hand, reserved, pack = (int(g) for g in stock.groups())
        shortfall = demand[sku] - (on_hand - reserved)
        if shortfall > 0:
            yield Call("reorder", {"sku": sku, "packs": -(-shortfall // pack)})
    for order in orders:
        yield Call("ship_order", {"order_id": order})
    yield Call("finish")


def spreadsheet_audit(first: str) -> Generator[Move, str, None]:
    last_row = _number(r"rows 1-(\d+)\)", first)
    on_screen = re.search(r"^The sheet:\n", first, re.MULTILINE)
    if on_screen:  # the lower levels show the sheet: reading it again spends a needed call
        sheet = first[on_screen.end() :]
    else:
        sheet = yield Call("read_range", {"cells": f"A1:F{last_row}"})
    cells: dict[str, str] = {}
    for line in sheet.splitlines():
        for part in re.split(r", (?=[A-F]\d+=)", line):
            ref, _, value = part.partition("=")
            cells[ref.strip()] = value.strip()
    notes = next(v for v in cells.values() if "NOTES" in v)
    rule = _find(r"Qty of (\d+) or more gets (\d+)% off", notes)
    min_qty, discount = int(rule.group(1)), Decimal(rule.group(2))
    cent = Decimal("0.01")
    expected: dict[str, Decimal] = {}
    lines: list[Decimal] = []
    taxes = Decimal(0)
    for row in range(2, last_row + 1):
        label, qty = cells.get(f"A{row}", ""), cells.get(f"B{row}", "")
        if qty.isdigit():
            share = (100 - discount) / 100 if int(qty) >= min_qty else Decimal(1)
            value = (int(qty) * Decimal(cells[f"C{row}"]) * share).quantize(cent, ROUND_HALF_UP)
            lines.append(value)
        elif label == "Subtotal":
            value = sum(lines, Decimal(0))
        elif label == "Tax":
            rate = Decimal(_find(r"Tax = (\d+)% of Subtotal", notes).group(1))
            value = taxes = (sum(lines, Decimal(0)) * rate / 100).quantize(cent, ROUND_HALF_UP)
        elif label == "Total":  # Subtotal + Tax; level 0 has no tax: the sum of the lines
            value = sum(lines, Decimal(0)) + taxes
        else:
            continue
        expected[f"D{row}"] = value
    for ref, value in expected.items():
        shown = cells.get(ref, "(blank)")
        if shown == "(blank)" or Decimal(shown) != value:
            yield Call("set_cell", {"cell": ref, "value": float(value)})
    yield Call("check_sheet")
    yield Call("submit")


# -- the registry -------------------------------------------------------------------------------
def _scripted(script: Script, why: str) -> Teacher:
    return Teacher(f"scripted:{script.__name__}", why, script)


def _solution(why: str) -> Teacher:
    return Teacher("solution", why)


EXPLORE = Teacher("explore", "no teacher knows this env: well-formed random commands")

TEACHERS: dict[str, Teacher] = {
    "BalanceReactionEnv": _solution("the equation shown fixes the coefficients"),
    "BattleshipEnv": _scripted(battleship, "fleet hidden: density hunt, then follow hits"),
    "BillPaymentEnv": _scripted(bill_payment, "reads bills, balances; moves the shortfall"),
    "BooleanFunctionEnv": _scripted(
        boolean_function, "queries all 16 rows; minimal sum of products"
    ),
    "BubbleSortTraceEnv": _solution("the array shown fixes every pass"),
    "BugHuntEnv": _solution("code and spec shown: the bugs can be read off"),
    "CappedNimEnv": _scripted(capped_nim, "solution() foresees the opponent; nim-sums"),
    "CodeBreakerEnv": _scripted(code_breaker, "code hidden: guesses a code fitting all pegs"),
    "EmailTriageEnv": _scripted(email_triage, "reads memo, each email; files by first rule"),
    "FileOrganizerEnv": _scripted(file_organizer, "solution() reads no file; this reads all"),
    "FogMazeEnv": _scripted(fog_maze, "maze hidden: new doorways, else backtrack"),
    "HaggleEnv": _scripted(haggle, "limits hidden: raise after insults, repeat"),
    "HiddenGraphPathEnv": _scripted(
        hidden_graph_path, "graph hidden: Dijkstra over expanded edges"
    ),
    "HiddenModulusEnv": _scripted(hidden_modulus, "m hidden: a multiple of m, then one below it"),
    "HiddenNumberEnv": _scripted(hidden_number, "number hidden: binary search"),
    "HiddenPolynomialEnv": _scripted(hidden_polynomial, "f hidden: f(-1), f(0), f(1) give a, b, c"),
    "HiddenRecurrenceEnv": _scripted(hidden_recurrence, "rule hidden: four terms give P and Q"),
    "HighLowEnv": _scripted(high_low, "deck hidden: counts unseen cards, skips ties"),
    "KeyDungeonEnv": _solution("rooms, locks and keys are all shown"),
    "LibraryLoansEnv": _scripted(library_loans, "reads record, due dates, catalogue first"),
    "LightsOutEnv": _scripted(lights_out, "solution() replays the scramble; GF(2) solve"),
    "MeetingSchedulerEnv": _scripted(
        meeting_scheduler, "reads every calendar and room, then books"
    ),
    "MinesweeperEnv": _solution("logic-solvable; reveals in deduction order"),
    "ProjectPlannerEnv": _scripted(project_planner, "walks dependencies back from the release"),
    "RestaurantSeatingEnv": _scripted(
        restaurant_seating, "reads parties, tables; backtracking match"
    ),
    "ShoppingBudgetEnv": _scripted(shopping_budget, "reads products, coupons; cheapest valid cart"),
    "SlidingPuzzleEnv": _solution("the board shown; A* from it"),
    "SmartHomeEnv": _scripted(smart_home, "effects hidden: measures, then plans to cap"),
    "SortedArraySearchEnv": _scripted(
        sorted_array_search, "array hidden: binary search on indices"
    ),
    "SpreadsheetAuditEnv": _scripted(
        spreadsheet_audit, "reads sheet and notes; recomputes column D"
    ),
    "SpringLabEnv": _scripted(spring_lab, "k, L0 hidden: two far-apart masses, a line"),
    "StackMachineTraceEnv": _solution("the program shown fixes every checkpoint"),
    "TwentyQuestionsEnv": _scripted(twenty_questions, "animal hidden: asks the most even split"),
    "WarehouseOrdersEnv": _scripted(warehouse_orders, "reads orders and stock; buys only the gap"),
}


def teacher_for(class_name: str) -> Teacher:
    """The teacher of an env class; `EXPLORE` for a class no teacher here knows."""
    return TEACHERS.get(class_name, EXPLORE)


def scripts() -> Iterable[Script]:
    """Every scripted teacher's script."""
    return [t.script for t in TEACHERS.values() if t.script is not None]
