"""TicTacToe: textarena's `TicTacToe-v0`, moves `[4]` (cells 0-8), against a perfect player.

The strong opponent is full minimax (it never loses): a win scores 10 minus the plies to
reach it, a loss minus that, a draw 0; ties go to the lowest cell, so it is deterministic.
"""

from __future__ import annotations

import random
import re
from functools import cache

from spade.evals.games.base import Game, Policy, last_match, random_legal
from spade.evals.games.textarena_game import TextArenaGame

_MOVE = re.compile(r"\[\s*(\d+)\s*\]")
_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class TicTacToeGame(TextArenaGame):
    def __init__(self) -> None:
        super().__init__("textarena.envs.TicTacToe.env:TicTacToeEnv")

    def cells(self) -> tuple[str, ...]:
        """The 9 cells, row by row: 'X', 'O' or ''."""
        return tuple(cell for row in self.state.game_state["board"] for cell in row)

    def symbol(self, player: int) -> str:
        return "X" if player == 1 else "O"  # textarena: player 1 is X, player 0 (first) is O

    def legal_moves(self) -> list[str]:
        return [f"[{i}]" for i, cell in enumerate(self.cells()) if not cell]


def _winner(cells: tuple[str, ...]) -> str:
    for a, b, c in _LINES:
        if cells[a] and cells[a] == cells[b] == cells[c]:
            return cells[a]
    return ""


@cache
def _value(cells: tuple[str, ...], mover: str, depth: int) -> int:
    """Minimax value for `mover` to play on `cells` (positive: mover wins)."""
    other = "O" if mover == "X" else "X"
    if _winner(cells) == other:
        return depth - 10
    free = [i for i, cell in enumerate(cells) if not cell]
    if not free:
        return 0
    return max(-_value(cells[:i] + (mover,) + cells[i + 1 :], other, depth + 1) for i in free)


def best_cell(cells: tuple[str, ...], mover: str) -> int:
    other = "O" if mover == "X" else "X"
    free = [i for i, cell in enumerate(cells) if not cell]
    return max(free, key=lambda i: (-_value(cells[:i] + (mover,) + cells[i + 1 :], other, 1), -i))


def minimax(game: Game, rng: random.Random) -> str:
    assert isinstance(game, TicTacToeGame)
    return f"[{best_cell(game.cells(), game.symbol(game.current_player))}]"


class TicTacToe:
    name = "tictactoe"
    first_player = 0
    move_format = "Answer with the cell number in square brackets, e.g. [4]."

    def new_game(self) -> Game:
        return TicTacToeGame()

    def parse(self, text: str) -> str | None:
        found = last_match(_MOVE, text)
        return f"[{int(found.group(1))}]" if found else None

    def opponents(self) -> dict[str, Policy]:
        return {"random": random_legal, "minimax": minimax}
