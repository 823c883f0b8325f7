"""The common interface of the two-player text games and their opponents.

A `Game` is one seeded match between seats 0 and 1. The runner only ever asks it who is to
move, what a seat has not seen yet (as text), which canonical moves are legal, to play a
canonical move, and how it ended. An illegal move ends the game at once: the mover loses
and is recorded as having made an invalid move. Games backed by textarena and games written
here (where textarena's version does not fit) look the same from outside.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended."""

    winner: int | None
    """The winning seat; None for a draw."""
    reason: str
    invalid_player: int | None = None
    """The seat whose invalid move ended the game, if any."""
    both_lose: bool = False
    """No winner and no draw (a negotiation with no deal): a loss for either seat."""
    metrics: dict[int, dict[str, float]] = field(default_factory=dict)
    """Game-specific per-seat figures (e.g. negotiation points), reported per sample."""


class Game(Protocol):
    """One seeded two-player match."""

    def reset(self, seed: int) -> None: ...

    @property
    def current_player(self) -> int: ...

    @property
    def done(self) -> bool: ...

    def observe(self, player: int) -> str:
        """Everything `player` has been shown since its last call (rules first), as text."""
        ...

    def legal_moves(self) -> list[str]:
        """The current player's legal moves, as canonical move strings."""
        ...

    def play(self, move: str) -> None:
        """Play the current player's move; an illegal one ends the game with that seat losing."""
        ...

    def outcome(self) -> Outcome: ...


Policy = Callable[[Game, random.Random], str]
"""An opponent: given the game (its current player is the opponent's seat) and the
opponent's own seeded generator, the canonical move to play."""


def random_legal(game: Game, rng: random.Random) -> str:
    """The weak opponent of every game: a uniformly random legal move."""
    return rng.choice(game.legal_moves())


_THINK_END = "</think>"


def last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of a move pattern in a model's answer, after any reasoning block.

    The last one, because a model that reasons aloud mentions candidate moves before it
    commits to one; textarena itself takes the first match, which would score a move the
    model considered and rejected.
    """
    answer = text.rpartition(_THINK_END)[2] if _THINK_END in text else text
    found = None
    for found in pattern.finditer(answer):  # noqa: B007 - keeps the last
        pass
    return found


class GameSpec(Protocol):
    """What the runner needs to know about a game (one per module)."""

    name: str
    first_player: int
    """The seat that moves first; the agent takes it on even episode indices."""
    move_format: str
    """One line for the prompt: how to write a move."""

    def new_game(self) -> Game: ...

    def parse(self, text: str) -> str | None:
        """A model's answer as a canonical move, or None when no move can be read."""
        ...

    def opponents(self) -> dict[str, Policy]: ...
