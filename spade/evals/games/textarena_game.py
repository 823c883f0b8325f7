"""textarena environments behind the `Game` interface.

Three things are adapted rather than taken as textarena leaves them:
- Randomness. textarena games draw from the global `random` module (`reset(seed)` calls
  `random.seed`). The runner steps many episodes in lockstep, so each game swaps in its own
  generator state around every call: an episode's dice and cards then depend only on its
  seed, never on which other episodes share the batch.
- Invalid moves. textarena's two-player state allows one retry by default; here the first
  invalid move ends the game (`error_allowance = 0`), so the mover loses.
- `close()`. textarena 0.6 returned the rewards; 0.7 returns `(rewards, game_info)`. Both
  are read.
Only the raw environment classes are used (no wrappers): observations are rendered here as
textarena's `LLMObservationWrapper` renders them (`[GAME] ...`, `[Player 1] ...`), one chat
turn per batch of new messages.
"""

from __future__ import annotations

import abc
import importlib
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from spade.evals.games.base import Outcome

GAME_ID = -1  # textarena's sender id for game messages


def load_env_class(entry_point: str) -> type[Any]:
    """`module:Class` of a textarena environment (imported lazily: textarena is heavy)."""
    module_name, _, class_name = entry_point.partition(":")
    env_class: type[Any] = getattr(importlib.import_module(module_name), class_name)
    return env_class


class TextArenaGame(abc.ABC):
    """One textarena environment played by two seats."""

    def __init__(self, entry_point: str, **kwargs: Any) -> None:
        self.entry_point = entry_point
        self.kwargs = kwargs
        self.env: Any = None
        self._random_state: Any = None

    @contextmanager
    def own_random(self) -> Iterator[None]:
        """Run textarena code on this game's random state, leaving the global one untouched."""
        outer = random.getstate()
        random.setstate(self._random_state)
        try:
            yield
        finally:
            self._random_state = random.getstate()
            random.setstate(outer)

    def reset(self, seed: int) -> None:
        self._random_state = random.Random(seed).getstate()
        self.env = load_env_class(self.entry_point)(**self.kwargs)
        with self.own_random():
            self.env.reset(num_players=2, seed=seed)
        self.env.state.error_allowance = 0

    @property
    def state(self) -> Any:
        return self.env.state

    @property
    def current_player(self) -> int:
        return int(self.env.state.current_player_id)

    @property
    def done(self) -> bool:
        return bool(self.env.state.done)

    def observe(self, player: int) -> str:
        messages = self.env.state.observations[player]
        self.env.state.observations[player] = []
        lines = []
        for sender, message, _kind in messages:
            if sender == player:
                continue  # the seat's own move: already in the chat as its answer
            name = (
                "GAME"
                if sender == GAME_ID
                else self.env.state.role_mapping.get(sender, f"Player {sender}")
            )
            lines.append(f"[{name}] {message}")
        return "\n".join(lines)

    def play(self, move: str) -> None:
        with self.own_random():
            self.env.step(move)

    def outcome(self) -> Outcome:
        closed = self.env.close()
        if isinstance(closed, tuple):  # textarena >= 0.7: (rewards, game_info)
            rewards, game_info = closed
        else:  # textarena 0.6: rewards only
            rewards, game_info = closed, getattr(self.env.state, "game_info", {})
        rewards = rewards or {}
        invalid = [pid for pid in (0, 1) if game_info.get(pid, {}).get("invalid_move")]
        reason = str(game_info.get(0, {}).get("reason", "")) if game_info else ""
        first, second = rewards.get(0, 0), rewards.get(1, 0)
        winner = None if first == second else (0 if first > second else 1)
        return Outcome(winner, reason, invalid[0] if invalid else None)

    @abc.abstractmethod
    def legal_moves(self) -> list[str]:
        """The moves the player to act may make, in the game's move format."""
