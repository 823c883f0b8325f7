"""Kuhn Poker: textarena's KuhnPoker env over 5 rounds (ante 1, bet 1; the round's opener
alternates, seat 1 opens round 1), moves `[check]`, `[bet]`, `[call]`, `[fold]`. The match
is won by the seat with more chips after the last round; equal chips is a draw.

The strong opponent plays the Nash equilibrium family of Kuhn (1950) with alpha = 1/6,
drawing from its own seeded generator. Opening: with J bet with probability alpha, with Q
check, with K bet with probability 3*alpha; after checking and facing a bet: J folds, Q calls
with probability alpha + 1/3, K calls. Second to act: facing a bet J folds, Q calls with
probability 1/3, K calls; after a check J bets with probability 1/3, Q checks, K bets.
"""

from __future__ import annotations

import random
import re

from spade.evals.games.base import Game, Policy, last_match, random_legal
from spade.evals.games.textarena_game import TextArenaGame

ROUNDS = 5
ALPHA = 1 / 6
JACK, QUEEN, KING = 0, 1, 2
_MOVE = re.compile(r"\[\s*(check|bet|call|fold)\s*\]", re.IGNORECASE)


class KuhnPokerGame(TextArenaGame):
    def __init__(self) -> None:
        super().__init__("textarena.envs.KuhnPoker.env:KuhnPokerEnv", max_rounds=ROUNDS)

    def legal_moves(self) -> list[str]:
        return [f"[{action}]" for action in self.state.game_state["current_legal_action_tree"]]

    def card(self, player: int) -> int:
        return int(self.state.game_state["player_cards"][player])

    def opened(self, player: int) -> bool:
        """Whether `player` opens the current round."""
        return bool(self.state.game_state["starting_player"] == player)


def _bet_or(rng: random.Random, probability: float, yes: str, no: str) -> str:
    return yes if rng.random() < probability else no


def nash(game: Game, rng: random.Random) -> str:
    assert isinstance(game, KuhnPokerGame)
    me = game.current_player
    card, facing_bet = game.card(me), "[call]" in game.legal_moves()
    if game.opened(me):
        if not facing_bet:  # opening decision
            chance = {JACK: ALPHA, QUEEN: 0.0, KING: 3 * ALPHA}[card]
            return _bet_or(rng, chance, "[bet]", "[check]")
        chance = {JACK: 0.0, QUEEN: ALPHA + 1 / 3, KING: 1.0}[card]  # checked, then bet into
        return _bet_or(rng, chance, "[call]", "[fold]")
    if facing_bet:
        chance = {JACK: 0.0, QUEEN: 1 / 3, KING: 1.0}[card]
        return _bet_or(rng, chance, "[call]", "[fold]")
    chance = {JACK: 1 / 3, QUEEN: 0.0, KING: 1.0}[card]  # checked to
    return _bet_or(rng, chance, "[bet]", "[check]")


class KuhnPoker:
    name = "kuhn_poker"
    first_player = 1
    move_format = "Answer with one action in square brackets: [check], [bet], [call] or [fold]."

    def new_game(self) -> Game:
        return KuhnPokerGame()

    def parse(self, text: str) -> str | None:
        found = last_match(_MOVE, text)
        return f"[{found.group(1).lower()}]" if found else None

    def opponents(self) -> dict[str, Policy]:
        return {"random": random_legal, "nash": nash}
