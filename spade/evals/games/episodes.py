"""Episodes of agent-vs-opponent play, as drivers of the one lockstep player.

An episode is one sample: a game, the agent's seat, an opponent policy and one seed. The
opponent moves at once whenever it is to move; when the agent is to move, the episode waits
with a chat (`messages`: every observation so far as user turns, the agent's answers as
assistant turns). `GameDriver` makes it a `spade.rollout.Driver`, so `spade.rollout.play`
asks for every waiting episode's move in one call, applies them, and repeats until every
game is over. An answer no move can be read from ends the game at once as an invalid move
(the agent loses), exactly as an illegal move does inside the game.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

from spade.evals.games.base import Game, GameSpec, Outcome, Policy
from spade.models.policy import Completion, SamplingParams
from spade.rollout import GenRequest

MOVE_CAP = 200
"""Safety stop per episode (agent and opponent moves together); no declared game comes near."""


def episode_seed(base_seed: int, sample_id: str) -> int:
    """A stable 63-bit seed per sample (independent of PYTHONHASHSEED and of the batch)."""
    digest = hashlib.sha256(f"{base_seed}/{sample_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True)
class EpisodeSpec:
    sample_id: str
    game: GameSpec
    opponent_name: str
    opponent: Policy
    agent_seat: int
    seed: int


@dataclass
class Episode:
    spec: EpisodeSpec
    game: Game
    rng: random.Random
    """The opponent's generator (the game's own chance uses the game seed)."""
    messages: list[dict[str, Any]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    moves: list[str | None] = field(default_factory=list)
    """The agent's parsed moves (None where nothing could be read)."""
    opponent_moves: int = 0
    unreadable: str | None = None
    """Why the agent's last answer ended the game without reaching it, if it did."""
    capped: bool = False

    @property
    def sample_id(self) -> str:
        return self.spec.sample_id

    @property
    def finished(self) -> bool:
        return self.game.done or self.unreadable is not None or self.capped

    def outcome(self) -> Outcome:
        if self.unreadable is not None:
            seat = self.spec.agent_seat
            return Outcome(1 - seat, self.unreadable, invalid_player=seat)
        if self.capped:
            return Outcome(None, f"stopped after {MOVE_CAP} moves", both_lose=True)
        return self.game.outcome()


def start_episode(spec: EpisodeSpec) -> Episode:
    game = spec.game.new_game()
    game.reset(spec.seed)
    episode = Episode(spec, game, random.Random(f"opponent/{spec.seed}"))
    _opponent_turns(episode)
    if not episode.finished:
        note = f"{spec.game.move_format} An invalid or unreadable move loses the game at once."
        first = game.observe(spec.agent_seat)
        episode.messages.append({"role": "user", "content": f"{first}\n\n{note}"})
    return episode


def _opponent_turns(episode: Episode) -> None:
    """Let the opponent move until the agent is to move or the game is over."""
    game, seat = episode.game, episode.spec.agent_seat
    while not game.done and game.current_player != seat:
        if episode.opponent_moves + len(episode.answers) >= MOVE_CAP:
            episode.capped = True
            return
        game.play(episode.spec.opponent(game, episode.rng))
        episode.opponent_moves += 1
        game.observe(1 - seat)  # scripted opponents read the state, not the text


def apply_answer(episode: Episode, answer: str | None) -> None:
    """The agent's answer (None: there was none, e.g. a prediction list ran out)."""
    if answer is None:
        episode.unreadable = "no answer for this move"
        return
    episode.answers.append(answer)
    episode.messages.append({"role": "assistant", "content": answer})
    move = episode.spec.game.parse(answer)
    episode.moves.append(move)
    if move is None:
        episode.unreadable = "no move could be read from the answer"
        return
    episode.game.play(move)
    _opponent_turns(episode)
    if not episode.finished:
        episode.messages.append(
            {"role": "user", "content": episode.game.observe(episode.spec.agent_seat)}
        )


class GameDriver:
    """One game episode as a `spade.rollout.Driver`: the agent's turns are its requests."""

    def __init__(self, spec: EpisodeSpec, phase: str, sampling: SamplingParams) -> None:
        self.spec = spec
        self.key = spec.sample_id
        self.phase = phase
        self.sampling = sampling
        self._episode: Episode | None = None

    def start(self) -> None:
        self._episode = start_episode(self.spec)

    def next_request(self) -> GenRequest | None:
        episode = self.episode
        if episode.finished:
            return None
        return GenRequest(self.phase, self.key, tuple(episode.messages), self.sampling)

    def feed(self, completion: Completion) -> None:
        apply_answer(self.episode, completion.text)

    def replay(self, saved: Any) -> None:
        """Saved answers, in order, against the same seeded opponent; a list that runs out
        is an invalid move (as in live play, an answer that is missing loses)."""
        episode = self.episode
        moves = saved if isinstance(saved, list) else [saved]
        while not episode.finished:
            turn = len(episode.answers)
            apply_answer(episode, str(moves[turn]) if turn < len(moves) else None)

    def close(self) -> None:
        pass

    @property
    def episode(self) -> Episode:
        if self._episode is None:
            raise RuntimeError(f"{self.key}: start() the episode first")
        return self._episode
