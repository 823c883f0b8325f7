"""The `games` runner: two-player text games against fixed opponents.

Sample ids are `GAME/OPPONENT/INDEX` (e.g. `tictactoe/minimax/0`). In episode INDEX the agent
takes the seat that moves first when INDEX is even and the other seat when it is odd; the
game's chance and the opponent's choices come from a seed derived from the declaration's
seed and the sample id, so an episode is the same whatever else runs beside it. The agent
answers each turn in its game's move format; an unreadable or illegal move loses the game
at once (`invalid`). Per sample: `win`, `draw`, `loss`, `invalid` (0/1) and the primary
`score` = win + 0.5 * draw, also broken down as `score[game=G]`, `score[G/OPPONENT]` and
`invalid[game=G]`.

Live play steps every episode in lockstep (one `respond` call per round, all waiting
episodes together). With saved predictions, a sample's `output` is the list of the agent's
answers in order; they are replayed against the same seeded opponent through the same
loop, so they score exactly as live play did (a list that runs out is an invalid move).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from spade.evals.declarations import Declaration, DeclarationError
from spade.evals.games import GAMES, Episode, EpisodeSpec, GameDriver, episode_seed
from spade.evals.samples import ProgressCallback, SampleResult
from spade.rollout import Responder, play


class GamesOptions(BaseModel):
    """The `options:` of a `runner: games` declaration."""

    model_config = ConfigDict(extra="forbid")

    seed: int = Field(2026, description="base seed of every episode's game and opponent")
    episodes: int = Field(20, ge=1, description="episodes per game and opponent")
    games: dict[str, list[str]] = Field(description="game name -> opponent names to play")


def parse_games_options(declaration: Declaration) -> GamesOptions:
    where = declaration.source_file or declaration.name
    options = declaration.typed_options(GamesOptions)
    for game, opponents in options.games.items():
        if game not in GAMES:
            raise DeclarationError(f"{where}: unknown game {game!r}; known: {', '.join(GAMES)}")
        known = GAMES[game].opponents()
        for opponent in opponents:
            if opponent not in known:
                raise DeclarationError(
                    f"{where}: game {game!r} has no opponent {opponent!r}; known: "
                    f"{', '.join(known)}"
                )
    return options


class GamesBenchmark:
    """The declared games benchmark (`runner: games`)."""

    def __init__(self, declaration: Declaration) -> None:
        self.declaration = declaration
        self.options = parse_games_options(declaration)

    def sample_ids(self, data_dir: Path | None) -> list[str]:
        return [
            f"{game}/{opponent}/{index}"
            for game, opponents in self.options.games.items()
            for opponent in opponents
            for index in range(self.options.episodes)
        ]

    def episode_spec(self, sample_id: str) -> EpisodeSpec:
        game_name, opponent_name, index = (sample_id.split("/") + ["", "", ""])[:3]
        opponents = self.options.games.get(game_name, [])
        if opponent_name not in opponents or not index.isdigit():
            raise ValueError(
                f"{self.declaration.name}: unknown sample id {sample_id!r} "
                "(ids look like 'tictactoe/minimax/0')"
            )
        if int(index) >= self.options.episodes:
            raise ValueError(f"{sample_id!r}: only episodes 0..{self.options.episodes - 1}")
        game = GAMES[game_name]
        first = game.first_player
        seat = first if int(index) % 2 == 0 else 1 - first
        return EpisodeSpec(
            sample_id,
            game,
            opponent_name,
            game.opponents()[opponent_name],
            seat,
            episode_seed(self.options.seed, sample_id),
        )

    def run(
        self,
        ids: list[str],
        respond: Responder,
        data_dir: Path | None,
        progress: ProgressCallback | None = None,
    ) -> list[SampleResult]:
        name = self.declaration.name
        sampling = self.declaration.generation.sampling(self.options.seed)
        drivers = [GameDriver(self.episode_spec(i), name, sampling) for i in ids]
        play(drivers, respond, phase=name, on_done=(lambda _: progress(1)) if progress else None)
        return [self.result(d.episode) for d in drivers]

    def result(self, episode: Episode) -> SampleResult:
        spec, outcome = episode.spec, episode.outcome()
        seat = spec.agent_seat
        win = float(outcome.winner == seat and not outcome.both_lose)
        draw = float(outcome.winner is None and not outcome.both_lose)
        invalid = float(outcome.invalid_player == seat)
        score = win + 0.5 * draw
        game, pair = spec.game.name, f"{spec.game.name}/{spec.opponent_name}"
        metrics = {
            "win": win,
            "draw": draw,
            "loss": 1.0 - win - draw,
            "invalid": invalid,
            f"score[game={game}]": score,
            f"score[{pair}]": score,
            f"invalid[game={game}]": invalid,
        }
        for name, value in outcome.metrics.get(seat, {}).items():
            metrics[f"{name}[game={game}]"] = value
        extra: dict[str, Any] = {
            "game": game,
            "opponent": spec.opponent_name,
            "agent_seat": seat,
            "seed": spec.seed,
            "reason": outcome.reason,
            "opponent_invalid": outcome.invalid_player == 1 - seat,
            "opponent_moves": episode.opponent_moves,
            "transcript": episode.messages[1:],
        }
        return SampleResult(
            benchmark=self.declaration.name,
            sample_id=spec.sample_id,
            prompt=episode.messages[:1],
            output=list(episode.answers),
            answer=list(episode.moves),
            target=None,
            score=score,
            metrics=metrics,
            parsed=episode.unreadable is None,
            extra=extra,
        )
