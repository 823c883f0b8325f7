"""The `games` runner on the real textarena games and spade's own negotiation game.

Responders here are plain functions over GenRequests standing in for a model; the scripted
players are the runner's own opponents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from spade.evals.benchmark import build_benchmark
from spade.evals.declarations import BENCHMARKS_DIR, DeclarationError, load_declaration
from spade.evals.games import GAMES, GameDriver, episode_seed
from spade.evals.games.connect_four import best_column
from spade.evals.games.negotiation import NegotiationGame, concession, proposal
from spade.evals.games.tictactoe import TicTacToeGame, best_cell
from spade.evals.games_runner import GamesBenchmark
from spade.models.policy import Completion, SamplingParams
from spade.rollout import GenRequest, Predictions, play
from tests.replies import completion, text_responder

_BOARD_ROW = re.compile(r"^ (\S) \| (\S) \| (\S) $", re.MULTILINE)


def games(**options: object) -> GamesBenchmark:
    declaration = load_declaration(BENCHMARKS_DIR / "games.yaml")
    if options:
        declaration = declaration.model_copy(update={"options": declaration.options | options})
    benchmark = build_benchmark(declaration)
    assert isinstance(benchmark, GamesBenchmark)
    return benchmark


@text_responder
def minimax_from_text(requests: Sequence[GenRequest]) -> list[list[str]]:
    """A perfect TicTacToe player that reads only the chat: its mark and the last board."""
    answers = []
    for request in requests:
        first = request.messages[0]["content"]
        mine = re.search(r"you will be '([XO])'", first)
        assert mine is not None
        rows = _BOARD_ROW.findall(request.messages[-1]["content"])[-3:]
        cells = tuple(c if c in "XO" else "" for row in rows for c in row)
        answers.append([f"I take the best cell. [{best_cell(cells, mine.group(1))}]"])
    return answers


def test_sample_ids_cover_every_game_and_opponent() -> None:
    ids = games().sample_ids(None)
    assert len(ids) == 5 * 2 * 20 and ids[0] == "tictactoe/random/0"
    assert {i.rsplit("/", 1)[0] for i in ids} >= {"tictactoe/minimax", "kuhn_poker/nash",
                                                  "connect_four/alphabeta", "pig/hold20",
                                                  "negotiation/concession"}  # fmt: skip


def test_perfect_tictactoe_player_never_loses_to_random_or_minimax() -> None:
    benchmark = games()
    ids = [f"tictactoe/{o}/{i}" for o in ("random", "minimax") for i in range(20)]
    results = benchmark.run(ids, minimax_from_text, None)
    assert all(r.metrics["loss"] == 0 and r.metrics["invalid"] == 0 for r in results)
    assert all(r.metrics["draw"] == 1 for r in results if "/minimax/" in r.sample_id)
    assert sum(r.metrics["win"] for r in results if "/random/" in r.sample_id) >= 15
    # Seats alternate: the agent opens the even episodes.
    assert [r.extra["agent_seat"] for r in results[:4]] == [0, 1, 0, 1]


def test_illegal_and_unreadable_moves_lose_at_once() -> None:
    benchmark = games()
    ids = ["tictactoe/random/0", "connect_four/alphabeta/0", "kuhn_poker/nash/1"]
    repeat_cell = benchmark.run(ids[:1], text_responder(lambda rs: [["[4]"] for _ in rs]), None)[0]
    assert repeat_cell.metrics["invalid"] == 1 and repeat_cell.metrics["loss"] == 1
    assert repeat_cell.parsed and len(repeat_cell.output) == 2  # the second [4] was illegal
    for result in benchmark.run(
        ids, text_responder(lambda rs: [["I would rather not say."] for _ in rs]), None
    ):
        assert result.metrics["invalid"] == 1 and result.score == 0 and not result.parsed
        assert len(result.output) == 1
    # A move that parses but is not legal now: [call] with no bet facing the opener.
    kuhn = benchmark.run(
        ["kuhn_poker/nash/0"], text_responder(lambda rs: [["[call]"] for _ in rs]), None
    )[0]
    assert kuhn.metrics["invalid"] == 1 and kuhn.parsed


def test_last_move_in_the_answer_counts() -> None:
    benchmark = games()
    answer = "<think>[0] looks weak.</think> Maybe [2]... no: I play [4]"
    result = benchmark.run(
        ["tictactoe/random/0"], text_responder(lambda rs: [[answer] for _ in rs]), None
    )[0]
    assert result.answer[0] == "[4]"


@text_responder
def cycling_player(requests: Sequence[GenRequest]) -> list[list[str]]:
    """Deterministic, often legal, sometimes not: exercises every game's paths."""
    menu = ["[4]", "[col 3]", "[bet]", "[call]", "[check]", "[roll]", "[hold]", "[Accept]",
            "[Propose: books=1, hats=1, balls=0]", "[2]", "[col 1]", "[fold]"]  # fmt: skip
    return [[menu[(len(r.messages) * 7 + len(r.sample_id)) % len(menu)]] for r in requests]


def test_predictions_replay_scores_exactly_as_live_play(tmp_path: Path) -> None:
    benchmark = games()
    ids = [i for i in benchmark.sample_ids(None) if int(i.rsplit("/", 1)[1]) < 2]
    live = benchmark.run(ids, cycling_player, None)
    lines = [{"benchmark": "games", "id": r.sample_id, "output": r.output} for r in live]
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    replayed = benchmark.run(ids, Predictions.from_file(path), None)
    for a, b in zip(live, replayed, strict=True):
        assert (a.sample_id, a.score, a.metrics, a.output) == (b.sample_id, b.score, b.metrics,
                                                                 b.output)  # fmt: skip
    # A list that runs out is an invalid move at that point.
    short = Predictions({"games": {"tictactoe/random/0": ["[4]"]}})
    result = benchmark.run(["tictactoe/random/0"], short, None)[0]
    assert result.metrics["invalid"] == 1 and result.extra["reason"] == "no answer for this move"


def test_lockstep_one_call_per_round_and_batch_independent_episodes() -> None:
    benchmark = games()
    ids = ["pig/hold20/0", "kuhn_poker/nash/0", "kuhn_poker/random/1", "pig/random/3",
           "negotiation/concession/1"]  # fmt: skip
    calls: list[list[str]] = []

    def respond(requests: Sequence[GenRequest]) -> list[list[Completion]]:
        calls.append([r.sample_id for r in requests])
        return cycling_player(requests)

    together = {r.sample_id: r for r in benchmark.run(ids, respond, None)}
    assert all(len(set(batch)) == len(batch) for batch in calls)
    assert len(calls) == max(len(r.output) for r in together.values())
    # Dice and cards come from each episode's own seed, not from who else is in the batch.
    for sample_id in ids:
        alone = benchmark.run([sample_id], cycling_player, None)[0]
        assert alone.extra["transcript"] == together[sample_id].extra["transcript"]


def test_strong_opponents_beat_random_and_scripted_moves_are_sound() -> None:
    benchmark = games()
    for game, strong in (("connect_four", "alphabeta"), ("pig", "hold20"),
                         ("negotiation", "concession")):  # fmt: skip
        drivers = {i: GameDriver(benchmark.episode_spec(i), "games", SamplingParams())
                   for i in (f"{game}/random/{n}" for n in range(6))}  # fmt: skip
        policy = GAMES[game].opponents()[strong]

        def scripted(
            requests: Sequence[GenRequest], p=policy, drivers=drivers
        ) -> list[list[Completion]]:
            episodes = [drivers[r.sample_id].episode for r in requests]
            return [[completion(p(e.game, e.rng))] for e in episodes]

        play(list(drivers.values()), scripted, phase="games")
        scores = [benchmark.result(d.episode).score for d in drivers.values()]
        assert sum(scores) / len(scores) >= 0.5, (game, scores)
    board = [list("......."), list("......."), list("......."), list("......."),
             list("OO....."), list("XXX....")]  # fmt: skip
    assert best_column(board, "X") == 3  # completes four
    assert best_column(board, "O") == 3  # blocks four


def test_negotiation_rules_and_concession() -> None:
    game = NegotiationGame()
    game.reset(episode_seed(2026, "negotiation/concession/0"))
    assert sum(c * v for c, v in zip(game.counts, game.values[0], strict=True)) == 10
    game.play(proposal(game.counts))  # seat 0 demands everything
    answer = concession(game, __import__("random").Random(0))
    assert answer != "[Accept]"  # worth 0 to the opponent
    game.play(answer)
    game.play("[Accept]")  # seat 0 accepts the concession proposal
    outcome = game.outcome()
    assert game.done and outcome.metrics[1]["deal"] == 1.0 and outcome.metrics[1]["points"] == 1
    stalled = NegotiationGame(max_moves=2)
    stalled.reset(1)
    stalled.play(proposal(stalled.counts))
    stalled.play(proposal(stalled.counts))
    assert stalled.done and stalled.outcome().both_lose


def test_textarena_close_of_0_6_returning_rewards_only_is_read() -> None:
    game = TicTacToeGame()
    game.reset(0)
    for cell in (0, 3, 1, 4, 2):  # seat 0 completes the top row
        game.play(f"[{cell}]")
    expected = game.outcome()
    rewards = game.env.state.rewards
    game.env.close = lambda: rewards  # textarena 0.6's close() returned only the rewards
    assert game.outcome() == expected and expected.winner == 0


def test_declaration_errors_name_the_game_or_opponent() -> None:
    with pytest.raises(DeclarationError, match="unknown game 'chess'"):
        games(games={"chess": ["random"]})
    with pytest.raises(DeclarationError, match="no opponent 'oracle'"):
        games(games={"tictactoe": ["oracle"]})
    with pytest.raises(ValueError, match="unknown sample id"):
        games().run(["tictactoe/oracle/0"], cycling_player, None)
