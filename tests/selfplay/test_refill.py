"""Dynamic sampling (`agent.refill_rounds`): envs whose plays carry no signal are replaced by
fresh envs, round by round, and only the replacements are added (spade.selfplay.agent_step)."""

from __future__ import annotations

from spade.rollout import Episode
from spade.selfplay.agent_step import EnvPlays, PlayableEnv, refill, refill_metrics


def plays(key: str, returns: list[float], terminated: bool = True) -> EnvPlays:
    episodes = [Episode(f"{key}/{n}", n, None, rewards=[r], terminated=terminated)
                for n, r in enumerate(returns)]  # fmt: skip
    return EnvPlays(PlayableEnv(key, "", None), list(range(len(returns))), episodes)


def test_signal_means_counted_plays_that_differ_in_return() -> None:
    assert plays("a", [0.0, 1.0, 0.0, 0.0]).has_signal
    assert not plays("a", [0.0, 0.0, 0.0, 0.0]).has_signal  # all failed alike
    assert not plays("a", [1.0, 1.0, 1.0, 1.0]).has_signal  # all solved
    assert not plays("a", [0.0, 1.0], terminated=False).has_signal  # truncated: masked


class Pool:
    """Draws fresh envs in order and records what each round was asked for."""

    def __init__(self, outcomes: dict[str, list[float]]) -> None:
        self.outcomes = outcomes
        self.asked: list[tuple[int, set[str]]] = []

    def draw(self, count: int, played: set[str]) -> list[PlayableEnv]:
        self.asked.append((count, set(played)))
        fresh = [key for key in self.outcomes if key not in played][:count]
        return [PlayableEnv(key, "", None) for key in fresh]

    def play(self, envs: list[PlayableEnv]) -> list[EnvPlays]:
        return [plays(env.key, self.outcomes[env.key]) for env in envs]


def test_each_round_replaces_the_envs_without_signal_until_none_is_left() -> None:
    first = [plays("a", [0, 0, 0, 0]), plays("b", [0, 1, 0, 0]), plays("c", [1, 1, 1, 1])]
    pool = Pool({"a": [], "b": [], "c": [], "d": [0, 0, 0, 0], "e": [0, 1, 1, 0],
                 "f": [0, 0.5, 0, 0], "g": [0, 1, 0, 1]})  # fmt: skip
    added = refill(first, pool.draw, pool.play, rounds=3)
    # Round 1: a and c had no signal -> d (none) and e (signal); round 2: d's slot -> f.
    assert [p.env.key for p in added] == ["d", "e", "f"]
    assert pool.asked == [(2, {"a", "b", "c"}), (1, {"a", "b", "c", "d", "e"})]
    assert refill_metrics(first, added) == {
        "agent/envs_with_signal": 1,
        "agent/refill_envs": 3,
        "agent/refill_envs_with_signal": 2,
    }


def test_no_rounds_or_a_full_signal_or_an_empty_pool_adds_nothing() -> None:
    idle = [plays("a", [0, 0])]
    pool = Pool({"a": [], "b": [0, 0]})
    assert refill(idle, pool.draw, pool.play, rounds=0) == [] and pool.asked == []
    assert refill([plays("a", [0, 1])], pool.draw, pool.play, rounds=2) == []
    assert pool.asked == []  # every env had a signal: no draw at all
    added = refill(idle, pool.draw, pool.play, rounds=5)  # b has none either, then none left
    assert [p.env.key for p in added] == ["b"] and len(pool.asked) == 2
