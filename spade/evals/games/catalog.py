"""The games the `games` runner knows, by name."""

from __future__ import annotations

from spade.evals.games.base import GameSpec
from spade.evals.games.connect_four import ConnectFour
from spade.evals.games.kuhn_poker import KuhnPoker
from spade.evals.games.negotiation import Negotiation
from spade.evals.games.pig import Pig
from spade.evals.games.tictactoe import TicTacToe

GAMES: dict[str, GameSpec] = {
    spec.name: spec for spec in (TicTacToe(), ConnectFour(), KuhnPoker(), Pig(), Negotiation())
}
