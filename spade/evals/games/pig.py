"""Pig: textarena's PigDice env, first to 50 points, at most 40 actions in all (then the
higher score wins); moves `[roll]` and `[hold]`. A roll of 1 loses the turn total.

The strong opponent is the classic hold-at-20 rule: roll until the turn total reaches 20
or would win the game, then hold.
"""

from __future__ import annotations

import random
import re

from spade.evals.games.base import Game, Policy, last_match, random_legal
from spade.evals.games.textarena_game import TextArenaGame

TARGET = 50
MAX_ACTIONS = 40
HOLD_AT = 20
_MOVE = re.compile(r"\[\s*(roll|hold)\s*\]", re.IGNORECASE)


class PigGame(TextArenaGame):
    def __init__(self) -> None:
        super().__init__(
            "textarena.envs.PigDice.env:PigDiceEnv", winning_score=TARGET, max_turns=MAX_ACTIONS
        )

    def legal_moves(self) -> list[str]:
        return ["[roll]", "[hold]"]

    def score(self, player: int) -> int:
        return int(self.state.game_state["scores"][player])

    def turn_total(self) -> int:
        return int(self.state.game_state["turn_total"])


def hold_at_20(game: Game, rng: random.Random) -> str:
    assert isinstance(game, PigGame)
    total = game.turn_total()
    if total >= HOLD_AT or game.score(game.current_player) + total >= TARGET:
        return "[hold]"
    return "[roll]"


class Pig:
    name = "pig"
    first_player = 0
    move_format = "Answer with [roll] or [hold]."

    def new_game(self) -> Game:
        return PigGame()

    def parse(self, text: str) -> str | None:
        found = last_match(_MOVE, text)
        return f"[{found.group(1).lower()}]" if found else None

    def opponents(self) -> dict[str, Policy]:
        return {"random": random_legal, "hold20": hold_at_20}
