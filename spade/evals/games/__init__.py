"""Two-player text games against fixed opponents (the `games` benchmark)."""

from spade.evals.games.base import Game, GameSpec, Outcome, Policy, random_legal
from spade.evals.games.catalog import GAMES
from spade.evals.games.episodes import Episode, EpisodeSpec, episode_seed, play_episodes

__all__ = [
    "GAMES",
    "Episode",
    "EpisodeSpec",
    "Game",
    "GameSpec",
    "Outcome",
    "Policy",
    "episode_seed",
    "play_episodes",
    "random_legal",
]
