"""The critical path: each sample's chain of dependent calls, counted by the responder.

The policy here is scripted (it answers at once, or after a set delay): what is checked is the
counting, not a model. spade-eval's record of a real run's critical path is checked on the CI
preset's games (tests/leaderboard/test_ci_gate.py, slow).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from spade.models.policy import Completion, Prompt, SamplingParams
from spade.rollout import Chains, GenRequest, PolicyResponder, describe_critical_path
from spade.rollout.cache import CompletionCache

SAMPLING = SamplingParams(max_new_tokens=8, temperature=0.0)


class Scripted:
    """Answers every prompt with "ok", after `delay` seconds when its prompt says "slow"."""

    concurrent_callers = True

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    def generate(
        self, prompts: Sequence[Prompt], sampling: SamplingParams, tools: Any = None
    ) -> list[Completion]:
        if any("slow" in str(prompt) for prompt in prompts):
            time.sleep(self.delay)
        return [Completion("ok", "stop", 1, 1) for _ in prompts]


def ask(sample_id: str, n: int = 1, text: str = "go", phase: str = "bench") -> GenRequest:
    return GenRequest(phase, sample_id, ({"role": "user", "content": text},), SAMPLING, n=n)


def test_each_call_is_one_more_turn_of_every_sample_it_serves() -> None:
    chains = Chains()
    respond = PolicyResponder(Scripted(), "scripted", None, 8, chains)
    respond([ask("a"), ask("b", n=3)])  # three draws of b: one turn
    respond([ask("a", text="turn 2")])
    respond([ask("a", text="turn 3"), ask("c"), ask("a", phase="other")])
    longest = chains.longest()
    assert longest is not None and (longest.phase, longest.sample_id, longest.turns) == (
        "bench",
        "a",
        3,
    )
    summary = chains.summary()
    assert summary is not None and summary["longest"]["turns"] == 3
    assert Chains().summary() is None


def test_answers_from_the_cache_are_turns_too(tmp_path: Any) -> None:
    """A re-run from the cache has the same chains (its times are what is short)."""
    cache = CompletionCache(tmp_path / "cache.sqlite")
    for _ in range(2):
        chains = Chains()
        respond = PolicyResponder(Scripted(), "scripted", cache, 8, chains)
        for turn in range(4):
            respond([ask("a", text=f"turn {turn}"), ask("b")] if turn == 0 else [ask("a")])
        longest = chains.longest()
        assert longest is not None and (longest.sample_id, longest.turns) == ("a", 4)


def test_chains_from_several_threads_are_each_counted_whole() -> None:
    chains = Chains()
    respond = PolicyResponder(Scripted(), "scripted", None, 8, chains)

    def episode(name: str) -> None:
        for turn in range(25):
            respond([ask(name, text=f"turn {turn}")])

    threads = [threading.Thread(target=episode, args=(f"s{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    summary = chains.summary()
    assert summary is not None and summary["longest"]["turns"] == 25


def test_the_line_names_the_slowest_chain_when_it_is_not_the_longest() -> None:
    chains = Chains()
    respond = PolicyResponder(Scripted(delay=0.3), "scripted", None, 8, chains)
    for turn in range(3):
        respond([ask("many", text=f"turn {turn}")])
    respond([ask("one", text="slow", phase="other")])
    line = describe_critical_path(chains.summary())
    assert line is not None
    assert line.startswith("critical path: 3 dependent turns in bench (many, ")
    assert "; slowest chain: other (one, 1 turn, " in line
    assert describe_critical_path(None) is None
