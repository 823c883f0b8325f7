"""Two-player text games against fixed opponents (the `games` benchmark)."""

from spade.evals.games.base import Game, GameSpec, Outcome, Policy, random_legal
from spade.evals.games.catalog import GAMES
from spade.evals.games.episodes import Episode, EpisodeSpec, GameDriver, episode_seed

__all__ = [
    "GAMES",
    "Episode",
    "EpisodeSpec",
    "Game",
    "GameDriver",
    "GameSpec",
    "Outcome",
    "Policy",
    "episode_seed",
    "random_legal",
]
