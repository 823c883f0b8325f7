"""Connect Four: textarena's `ConnectFour-v0` (6 x 7, open board), moves `[col 3]`.

The strong opponent is a depth-4 alpha-beta search. Leaves are scored by the usual window
heuristic (each line of four: three of mine and a gap +5, two and two gaps +2, three of the
opponent's and a gap -4; +3 per disc in the centre column); a win is worth 10^6 (sooner is
better). Columns are tried centre-out and only a strictly better score replaces the
incumbent, so its choice is deterministic.
"""

from __future__ import annotations

import random
import re

from spade.evals.games.base import Game, Policy, last_match, random_legal
from spade.evals.games.textarena_game import TextArenaGame

ROWS, COLS = 6, 7
_MOVE = re.compile(r"\[\s*(?:col(?:umn)?\s*)?(\d+)\s*\]", re.IGNORECASE)
_ORDER = (3, 2, 4, 1, 5, 0, 6)
_WIN = 1_000_000
DEPTH = 4

Board = list[list[str]]  # row 0 is the top, '.' is empty


def _windows() -> list[tuple[tuple[int, int], ...]]:
    found = []
    for r in range(ROWS):
        for c in range(COLS):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = tuple((r + k * dr, c + k * dc) for k in range(4))
                if all(0 <= rr < ROWS and 0 <= cc < COLS for rr, cc in cells):
                    found.append(cells)
    return found


WINDOWS = _windows()


class ConnectFourGame(TextArenaGame):
    def __init__(self) -> None:
        super().__init__(
            "textarena.envs.ConnectFour.env:ConnectFourEnv",
            is_open=True,
            num_rows=ROWS,
            num_cols=COLS,
        )

    def board(self) -> Board:
        return [list(row) for row in self.state.game_state["board"]]

    def symbol(self, player: int) -> str:
        return "X" if player == 0 else "O"

    def legal_moves(self) -> list[str]:
        top = self.state.game_state["board"][0]
        return [f"[col {c}]" for c in range(COLS) if top[c] == "."]


def _drop(board: Board, col: int, disc: str) -> int | None:
    for r in range(ROWS - 1, -1, -1):
        if board[r][col] == ".":
            board[r][col] = disc
            return r
    return None


def _wins(board: Board, row: int, col: int) -> bool:
    """Whether the disc just dropped at (row, col) completes a line of four."""
    disc = board[row][col]
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            r, c = row + sign * dr, col + sign * dc
            while 0 <= r < ROWS and 0 <= c < COLS and board[r][c] == disc:
                run, r, c = run + 1, r + sign * dr, c + sign * dc
        if run >= 4:
            return True
    return False


def _score(board: Board, me: str, them: str) -> int:
    total = 3 * sum(board[r][COLS // 2] == me for r in range(ROWS))
    for cells in WINDOWS:
        line = [board[r][c] for r, c in cells]
        mine, theirs, empty = line.count(me), line.count(them), line.count(".")
        if mine == 3 and empty == 1:
            total += 5
        elif mine == 2 and empty == 2:
            total += 2
        if theirs == 3 and empty == 1:
            total -= 4
    return total


def _search(
    board: Board, depth: int, alpha: int, beta: int, me: str, them: str, maximising: bool
) -> int:
    moves = [c for c in _ORDER if board[0][c] == "."]
    if depth == 0 or not moves:
        return _score(board, me, them)
    disc = me if maximising else them
    best = -_WIN * 10 if maximising else _WIN * 10
    for col in moves:
        row = _drop(board, col, disc)
        assert row is not None
        if _wins(board, row, col):
            value = (_WIN + depth) if maximising else -(_WIN + depth)
        else:
            value = _search(board, depth - 1, alpha, beta, me, them, not maximising)
        board[row][col] = "."
        if maximising:
            best, alpha = max(best, value), max(alpha, value)
        else:
            best, beta = min(best, value), min(beta, value)
        if alpha >= beta:
            break
    return best


def best_column(board: Board, me: str, depth: int = DEPTH) -> int:
    them = "O" if me == "X" else "X"
    best_col, best_value = -1, -_WIN * 10
    for col in (c for c in _ORDER if board[0][c] == "."):
        row = _drop(board, col, me)
        assert row is not None
        if _wins(board, row, col):
            value = _WIN + depth
        else:
            value = _search(board, depth - 1, -_WIN * 10, _WIN * 10, me, them, False)
        board[row][col] = "."
        if value > best_value:
            best_col, best_value = col, value
    return best_col


def alphabeta(game: Game, rng: random.Random) -> str:
    assert isinstance(game, ConnectFourGame)
    return f"[col {best_column(game.board(), game.symbol(game.current_player))}]"


class ConnectFour:
    name = "connect_four"
    first_player = 0
    move_format = "Answer with the column in square brackets, e.g. [col 3]."

    def new_game(self) -> Game:
        return ConnectFourGame()

    def parse(self, text: str) -> str | None:
        found = last_match(_MOVE, text)
        return f"[col {int(found.group(1))}]" if found else None

    def opponents(self) -> dict[str, Policy]:
        return {"random": random_legal, "alphabeta": alphabeta}
