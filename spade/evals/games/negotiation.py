"""Negotiation: a deal-or-no-deal style split of a pool of items, written here.

Why not textarena's: `SimpleNegotiation` runs offline, but free text is never an invalid
move there and a seat that never trades always draws (both gains stay 0), so win/draw/loss
and invalid rates would say little. This game keeps the textarena move style instead.

Rules. A pool of books, hats and balls (1-4 of each) is to be split. Each seat values the
item kinds privately (whole points, its values over the whole pool total 10). Seats
alternate moves, seat 0 first, at most `MAX_MOVES` moves in all: `[Propose: books=1,
hats=2, balls=0]` proposes what the mover keeps (the rest goes to the other seat) and
replaces any standing proposal; `[Accept]` accepts the other seat's standing proposal and
ends the game. Result: with a deal, the seat with more points wins (equal points draw);
with no deal by the last move, neither seat gets anything and both lose.

The strong opponent concedes by a fixed rule. Its target starts at 10 points and falls
linearly to 5 on its last move. It accepts a standing proposal worth at least its target to
it; otherwise it proposes the split that is worth the least to it among those at or above
its target (ties: more items to the other seat, then the first in a fixed order).
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass

from spade.evals.games.base import Game, Outcome, Policy, last_match, random_legal

KINDS = ("books", "hats", "balls")
TOTAL = 10
MAX_MOVES = 8
FLOOR = 5
_PROPOSE = re.compile(
    r"\[\s*propose\s*:?\s*books\s*=\s*(\d+)\s*,\s*hats\s*=\s*(\d+)\s*,\s*balls\s*=\s*(\d+)\s*\]"
    r"|\[\s*(accept)\s*\]",
    re.IGNORECASE,
)


def proposal(share: tuple[int, ...]) -> str:
    return "[Propose: " + ", ".join(f"{k}={n}" for k, n in zip(KINDS, share, strict=True)) + "]"


@dataclass
class _Standing:
    by: int
    keeps: tuple[int, ...]


class NegotiationGame:
    """One seeded split negotiation."""

    def __init__(self, max_moves: int = MAX_MOVES) -> None:
        self.max_moves = max_moves

    def reset(self, seed: int) -> None:
        rng = random.Random(seed)
        while True:
            self.counts = tuple(rng.randint(1, 4) for _ in KINDS)
            values = [self._values(rng), self._values(rng)]
            if all(v is not None for v in values):
                break
        self.values: list[tuple[int, ...]] = [v for v in values if v is not None]
        self.moves = 0
        self.turn = 0
        self.standing: _Standing | None = None
        self.deal: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        self.invalid: int | None = None
        self.reason = ""
        self.finished = False
        self._unseen: list[list[str]] = [[self._rules(0)], [self._rules(1)]]

    def _values(self, rng: random.Random) -> tuple[int, ...] | None:
        """Random whole-point values with counts . values == TOTAL (None: try again)."""
        for _ in range(100):
            values = tuple(rng.randint(0, TOTAL) for _ in KINDS)
            if sum(c * v for c, v in zip(self.counts, values, strict=True)) == TOTAL:
                return values
        return None

    def _rules(self, player: int) -> str:
        pool = ", ".join(f"{n} {k}" for k, n in zip(KINDS, self.counts, strict=True))
        worth = ", ".join(
            f"each of {k} is worth {v}" for k, v in zip(KINDS, self.values[player], strict=True)
        )
        return (
            f"You are Player {player} in a negotiation over how to split a pool of items: "
            f"{pool}.\nTo you, {worth} (the whole pool is worth {TOTAL} to you). Your opponent "
            f"values the items differently, and its values (also {TOTAL} in all) are private.\n"
            "Players alternate moves, Player 0 first. On your move either propose a split by "
            f"naming what YOU keep (the rest goes to your opponent), e.g. '{proposal((1, 0, 2))}', "
            "or accept the opponent's standing proposal with '[Accept]'.\n"
            f"At most {self.max_moves} moves are made in all. With a deal, whoever gets more "
            "points by their own values wins; with no deal by then, both players lose."
        )

    @property
    def current_player(self) -> int:
        return self.turn

    @property
    def done(self) -> bool:
        return self.finished

    def observe(self, player: int) -> str:
        text = "\n".join(self._unseen[player])
        self._unseen[player] = []
        return text

    def points(self, player: int, share: tuple[int, ...]) -> int:
        return sum(n * v for n, v in zip(share, self.values[player], strict=True))

    def splits(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*(range(n + 1) for n in self.counts)))

    def legal_moves(self) -> list[str]:
        moves = [proposal(share) for share in self.splits()]
        return moves + ["[Accept]"] if self.standing is not None else moves

    def play(self, move: str) -> None:
        player, other = self.turn, 1 - self.turn
        found = _PROPOSE.fullmatch(move.strip())
        if found is None:
            return self._end_invalid(player, f"unreadable move {move!r}")
        if found.group(4):
            if self.standing is None:
                return self._end_invalid(player, "accepted with no proposal standing")
            keeps = self.standing.keeps
            gets = tuple(n - k for n, k in zip(self.counts, keeps, strict=True))
            self.deal = (gets, keeps) if player == 0 else (keeps, gets)
            self.finished = True
            self.reason = f"Player {player} accepted the proposal."
            self._tell_both(
                f"Player {player} accepted. Deal: Player 0 gets {self._share(0)}; "
                f"Player 1 gets {self._share(1)}."
            )
            return None
        keeps = tuple(int(found.group(i)) for i in (1, 2, 3))
        if any(k > n for k, n in zip(keeps, self.counts, strict=True)):
            return self._end_invalid(player, f"proposed to keep more than the pool holds ({move})")
        self.standing = _Standing(player, keeps)
        self.moves += 1
        self.turn = other
        gives = tuple(n - k for n, k in zip(self.counts, keeps, strict=True))
        self._unseen[other].append(
            f"[Player {player}] proposes to keep {self._items(keeps)}; you would get "
            f"{self._items(gives)} (worth {self.points(other, gives)} to you). "
            f"{self.max_moves - self.moves} moves remain."
        )
        if self.moves >= self.max_moves:
            self.finished = True
            self.reason = "No deal was reached before the move limit."
            self._tell_both("[GAME] No deal: the move limit was reached. Both players lose.")
        return None

    def _items(self, share: tuple[int, ...]) -> str:
        return ", ".join(f"{n} {k}" for k, n in zip(KINDS, share, strict=True))

    def _share(self, player: int) -> str:
        assert self.deal is not None
        share = self.deal[player]
        return f"{self._items(share)} ({self.points(player, share)} points)"

    def _tell_both(self, message: str) -> None:
        for seat in (0, 1):
            self._unseen[seat].append(message)

    def _end_invalid(self, player: int, reason: str) -> None:
        self.invalid = player
        self.finished = True
        self.reason = f"Player {player} made an invalid move: {reason}."

    def outcome(self) -> Outcome:
        if self.invalid is not None:
            return Outcome(1 - self.invalid, self.reason, self.invalid)
        if self.deal is None:
            no_deal = {0: {"deal": 0.0}, 1: {"deal": 0.0}}
            return Outcome(None, self.reason, metrics=no_deal, both_lose=True)
        points = [self.points(0, self.deal[0]), self.points(1, self.deal[1])]
        winner = None if points[0] == points[1] else int(points[1] > points[0])
        metrics = {seat: {"deal": 1.0, "points": points[seat] / TOTAL} for seat in (0, 1)}
        return Outcome(winner, self.reason, metrics=metrics)


def concession(game: Game, rng: random.Random) -> str:
    assert isinstance(game, NegotiationGame)
    me = game.current_player
    made = (game.moves + 1 - me) // 2  # seat 0 moves on even move numbers, seat 1 on odd
    total_mine = (game.max_moves + 1 - me) // 2
    step = (TOTAL - FLOOR) / max(total_mine - 1, 1)
    target = TOTAL - step * made
    standing = game.standing
    if standing is not None and standing.by != me:
        offered = tuple(n - k for n, k in zip(game.counts, standing.keeps, strict=True))
        if game.points(me, offered) >= target - 1e-9:
            return "[Accept]"
    candidates = [s for s in game.splits() if game.points(me, s) >= target - 1e-9]
    if not candidates:
        candidates = [max(game.splits(), key=lambda s: game.points(me, s))]
    share = min(candidates, key=lambda s: (game.points(me, s), sum(s)))
    return proposal(share)


class Negotiation:
    name = "negotiation"
    first_player = 0
    move_format = (
        "Answer with one move: [Propose: books=B, hats=H, balls=L] (what you keep) or [Accept]."
    )

    def new_game(self) -> Game:
        return NegotiationGame()

    def parse(self, text: str) -> str | None:
        found = last_match(_PROPOSE, text)
        if found is None:
            return None
        if found.group(4):
            return "[Accept]"
        return proposal(tuple(int(found.group(i)) for i in (1, 2, 3)))

    def opponents(self) -> dict[str, Policy]:
        return {"random": random_legal, "concession": concession}
