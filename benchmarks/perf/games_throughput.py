"""Games played per second, and the runner's per-game overhead over bare textarena stepping.

Run: python benchmarks/perf/games_throughput.py [--episodes 20] [--json]

(1) Scripted vs scripted: every game of benchmarks/games.yaml, the agent's seat played by the
    game's strong scripted policy through the runner's lockstep loop (`spade.rollout.play`),
    against the random and the strong opponent: games per second on one core.
(2) Overhead: the same random-vs-random games of each textarena game, once through
    `GamesBenchmark.run` (the agent's moves replayed as predictions, the opponent live,
    results built) and once by stepping the textarena environment directly with the
    recorded moves of both seats (`get_observation` + `step` per move, `close` at the end).
    The difference per game is what our loop adds: chat rendering, parsing, per-episode
    random state, opponent calls and result records.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from tabulate import tabulate

from spade.evals.benchmark import build_benchmark
from spade.evals.declarations import BENCHMARKS_DIR, load_declaration
from spade.evals.games import GAMES, Episode, EpisodeSpec, Game, GameDriver, Policy
from spade.evals.games.textarena_game import TextArenaGame, load_env_class
from spade.evals.games_runner import GamesBenchmark
from spade.host import this_host
from spade.models.policy import Completion, SamplingParams
from spade.rollout import GenRequest, Predictions, play


def scripted_play(specs: list[EpisodeSpec], choose: Callable[[Episode], str]) -> list[Episode]:
    """Every episode played through the runner's lockstep player, moves chosen by `choose`
    from the episode's game state (a scripted agent instead of a model)."""
    drivers = {spec.sample_id: GameDriver(spec, "games", SamplingParams()) for spec in specs}

    def respond(requests: Sequence[GenRequest]) -> list[list[Completion]]:
        moves = [choose(drivers[r.sample_id].episode) for r in requests]
        return [[Completion(m, "stop", 0, 0)] for m in moves]

    play(list(drivers.values()), respond, phase="games")
    return [d.episode for d in drivers.values()]


def strong_name(game: str) -> str:
    return [name for name in GAMES[game].opponents() if name != "random"][0]


def scripted_rate(bench: GamesBenchmark, game: str, opponent: str, episodes: int) -> float:
    specs = [bench.episode_spec(f"{game}/{opponent}/{i}") for i in range(episodes)]
    agent = GAMES[game].opponents()[strong_name(game)]
    rng = random.Random(0)
    started = time.perf_counter()
    scripted_play(specs, lambda e: agent(e.game, rng))
    return episodes / (time.perf_counter() - started)


def recording(policy: Policy, log: list[str]) -> Policy:
    def play(game: Game, rng: random.Random) -> str:
        move = policy(game, rng)
        log.append(move)
        return move

    return play


def random_games(bench: GamesBenchmark, game: str, episodes: int) -> dict[str, Any]:
    """Random-vs-random games: the agent's answers per sample and both seats' moves in order."""
    logs: dict[str, list[str]] = {}
    specs: list[EpisodeSpec] = []
    for i in range(episodes):
        spec = bench.episode_spec(f"{game}/random/{i}")
        logs[spec.sample_id] = []
        specs.append(
            dataclasses.replace(spec, opponent=recording(spec.opponent, logs[spec.sample_id]))
        )
    rng = random.Random(1)

    def act(e: Episode) -> str:
        move = str(rng.choice(e.game.legal_moves()))
        logs[e.sample_id].append(move)
        return move

    done = scripted_play(specs, act)
    return {"answers": {e.sample_id: list(e.answers) for e in done}, "moves": logs,
            "seeds": {e.sample_id: e.spec.seed for e in done}}  # fmt: skip


def direct_seconds(game: str, recorded: dict[str, Any]) -> float:
    template = GAMES[game].new_game()
    assert isinstance(template, TextArenaGame)
    env_class = load_env_class(template.entry_point)
    started = time.perf_counter()
    for sample_id, moves in recorded["moves"].items():
        env = env_class(**template.kwargs)
        env.reset(num_players=2, seed=recorded["seeds"][sample_id])
        env.state.error_allowance = 0
        for move in moves:
            env.get_observation()
            done, _ = env.step(move)
        assert done, sample_id
        env.close()
    return time.perf_counter() - started


def loop_seconds(bench: GamesBenchmark, recorded: dict[str, Any]) -> float:
    respond = Predictions({"games": recorded["answers"]})
    started = time.perf_counter()
    results = bench.run(list(recorded["answers"]), respond, None)
    elapsed = time.perf_counter() - started
    assert all(r.metrics["invalid"] == 0 for r in results)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20, help="games per measurement")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(this_host(), file=sys.stderr if args.json else sys.stdout)
    built = build_benchmark(load_declaration(BENCHMARKS_DIR / "games.yaml"))
    assert isinstance(built, GamesBenchmark)
    bench = built
    import textarena  # noqa: F401 - imported once here, outside every timing

    scripted = [{
        "game": game,
        "strong agent vs": opponent,
        "games/s": round(scripted_rate(bench, game, opponent, args.episodes), 1),
    } for game, opponents in bench.options.games.items() for opponent in opponents]  # fmt: skip
    overhead = []
    for game in bench.options.games:
        if not isinstance(GAMES[game].new_game(), TextArenaGame):
            continue  # spade's own game: there is no bare textarena loop to compare with
        recorded = random_games(bench, game, args.episodes)
        direct, ours = direct_seconds(game, recorded), loop_seconds(bench, recorded)
        moves = sum(len(m) for m in recorded["moves"].values()) / args.episodes
        overhead.append({
            "game (random vs random)": game,
            "moves/game": round(moves, 1),
            "textarena direct, ms/game": round(1000 * direct / args.episodes, 3),
            "spade loop, ms/game": round(1000 * ours / args.episodes, 3),
            "overhead, ms/game": round(1000 * (ours - direct) / args.episodes, 3),
        })  # fmt: skip
    if args.json:
        print(json.dumps({"scripted": scripted, "overhead": overhead}, indent=2))
    else:
        print(tabulate(scripted, headers="keys", tablefmt="github"))
        print()
        print(tabulate(overhead, headers="keys", tablefmt="github"))


if __name__ == "__main__":
    main()
