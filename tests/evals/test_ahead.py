"""lm-eval's requests sent ahead: built as the run builds them, answered once, scored the same.

The responders are the lm_eval runner tests' replays (fixed texts by SAMPLE_ID): what is
checked is that sending the generation ahead changes neither the prompts nor the scores.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from spade.cli.eval import _when_ready
from spade.evals.ahead import Ahead, ahead_of
from spade.evals.benchmark import build_benchmark
from spade.evals.lm_eval_runner import LmEvalBenchmark
from spade.evals.run import BenchmarkRun, run_benchmark
from spade.evals.side_by_side import Job, run_side_by_side
from spade.models.policy import Completion
from spade.rollout import GenRequest, request_key
from tests.data import DATA_DIR
from tests.evals.test_lm_eval_runner import BENCHMARKS, CASES, Replay, Run, declaration

pytestmark = pytest.mark.skipif(
    not DATA_DIR.is_dir(), reason=f"offline benchmark data not found at {DATA_DIR}"
)


def keys(requests: Sequence[GenRequest]) -> list[str]:
    return sorted(request_key("test", r, 0) for r in requests)


class Calls(Replay):
    """A replay that counts its calls."""

    def __init__(self, texts: dict[str, str]) -> None:
        super().__init__(texts)
        self.calls = 0

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[Completion]]:
        self.calls += 1
        return super().__call__(requests)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_requests_built_ahead_are_the_ones_the_run_makes(name: str) -> None:
    plain = Run(name)
    benchmark = build_benchmark(plain.declaration)
    assert isinstance(benchmark, LmEvalBenchmark)
    assert keys(benchmark.requests(list(plain.texts), DATA_DIR)) == keys(plain.responder.requests)


def test_a_run_through_ahead_asks_the_engine_once_and_scores_the_same() -> None:
    """gsm8k fetched on its own thread while mmlu_stem runs on this one (lm-eval's global
    seeding is serialised, so neither changes the other's prompts); gsm8k then runs from
    what was fetched."""
    plain = Run("gsm8k")
    replay = Calls(plain.texts)
    ahead = ahead_of(plain.declaration, replay, DATA_DIR, list(plain.texts), None, None)
    assert ahead is not None
    fetching = threading.Thread(target=ahead.fetch)
    fetching.start()
    other = Run("mmlu_stem")
    fetching.join()
    result = run_benchmark(plain.declaration, ahead, DATA_DIR, ids=list(plain.texts))
    assert replay.calls == 1 and ahead.misses == 0
    assert [(s.sample_id, s.score, s.metrics) for s in result.samples] == [
        (s.sample_id, s.score, s.metrics) for s in plain.results
    ]
    assert other.results  # ran beside it


def test_a_request_not_fetched_is_answered_by_the_engine() -> None:
    texts = {sample_id: text for sample_id, (_, text) in CASES["gsm8k"]().items()}
    replay = Calls(texts)
    ahead = Ahead(replay, lambda: [])
    ahead.fetch()
    result = run_benchmark(declaration("gsm8k"), ahead, DATA_DIR, ids=list(texts))
    assert ahead.misses == len(texts) and len(result.samples) == len(texts)


def test_a_failed_fetch_is_raised_by_the_run() -> None:
    def broken() -> list[GenRequest]:
        raise ValueError("no such data")

    ahead = Ahead(Replay({}), broken)
    ahead.fetch()
    with pytest.raises(ValueError, match="no such data"):
        ahead([])


def test_only_benchmarks_that_build_their_requests_are_sent_ahead() -> None:
    assert ahead_of(declaration("gsm8k"), Replay({}), DATA_DIR, None, "ci", None) is not None
    assert ahead_of(declaration("humaneval"), Replay({}), DATA_DIR, None, "ci", None) is None


def test_a_jobs_ahead_starts_before_its_turn_on_the_main_thread() -> None:
    """Two main-thread jobs: the second's ahead runs while the first still holds the main
    thread (the first waits for it), so lm-eval's families generate side by side."""
    second_started = threading.Event()

    def first() -> str:
        assert second_started.wait(timeout=30)
        return "first"

    jobs = [Job("lm_eval", first), Job("lm_eval", lambda: "second", second_started.set)]
    assert run_side_by_side(jobs, at_once=2) == ["first", "second"]
    assert run_side_by_side([Job("lm_eval", lambda: "alone", lambda: None)], 1) == ["alone"]


def test_a_run_waiting_for_its_fetch_does_not_hold_the_lm_eval_lock() -> None:
    """spade-eval's order: the main thread waits for the fetch (`ready`) before its lm-eval
    run takes the lock the fetch needs to build its requests. (Waiting inside the run
    deadlocked a real quick-preset run.)"""
    plain = Run("gsm8k")
    ahead = ahead_of(plain.declaration, Calls(plain.texts), DATA_DIR, list(plain.texts), None, None)
    assert ahead is not None

    def run() -> int:
        ahead.ready()
        return len(run_benchmark(plain.declaration, ahead, DATA_DIR, ids=list(plain.texts)).samples)

    done: list[int] = []
    main = threading.Thread(target=lambda: done.extend(run_side_by_side(
        [Job("lm_eval", run, ahead.fetch)], at_once=2)), daemon=True)  # fmt: skip
    main.start()
    main.join(timeout=300)
    assert done == [len(plain.texts)] and ahead.misses == 0


def test_a_benchmark_sent_ahead_counts_its_seconds_from_the_fetch() -> None:
    """Its scoring pass alone takes no time; the run's seconds still hold its generation."""
    plain = Run("gsm8k")

    def slow(requests: Sequence[GenRequest]) -> list[list[Completion]]:
        time.sleep(0.5)
        return [[] for _ in requests]

    early = Ahead(slow, lambda: [])
    early.fetch()
    scoring = BenchmarkRun(plain.declaration, [], 0.0, {})
    assert _when_ready(early, lambda: scoring).seconds >= 0.5
