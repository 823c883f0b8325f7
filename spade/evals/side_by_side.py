"""Benchmarks side by side: the benchmarks of one run at once, against one engine.

An engine that batches concurrent callers (`concurrent_callers`: vLLM in process, an HTTP
server) is underused by one benchmark at a time: a multi-turn benchmark asks a few replies per
turn and then waits on its environments, and a five-sample slice is a batch of five. Run side
by side, the benchmarks fill each other's batches, and the latency-bound ones (one dialogue
decoded turn by turn) overlap with the rest instead of adding to them.

lm-eval benchmarks run on the main thread, one after another: their scorers (math_verify)
time themselves with SIGALRM, which only the main thread may set, and lm-eval reseeds the
process's global generators around each run. Their generation need not wait in line: a job's
`ahead` starts on its own thread at once (`spade.evals.ahead` sends an lm-eval benchmark's
requests to the engine there). Every other benchmark runs on a worker thread.
Workers are daemon threads, so Ctrl-C or a failed benchmark ends the run at once rather than
after the benchmarks still running.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

MAIN_THREAD_RUNNERS = frozenset({"lm_eval"})
"""Runners that must run on the main thread (see the module doc)."""


@dataclass(frozen=True)
class Job(Generic[T]):
    runner: str
    """The declaration's runner: decides the thread it runs on."""
    run: Callable[[], T]
    ahead: Callable[[], None] | None = None
    """Work of this job to start at once on a thread of its own, before the job's turn (a
    main-thread job's generation: `spade.evals.ahead`); `run` waits for what it needs."""


def run_side_by_side(jobs: Sequence[Job[T]], at_once: int) -> list[T]:
    """Each job's result, in the jobs' order, with at most `at_once` jobs running at a time
    (1: one after another, in order, on this thread). The first job to fail fails the whole
    call with its own exception, without waiting for the jobs still running."""
    if at_once <= 1:
        return [_in_turn(job) for job in jobs]
    for job in jobs:
        if job.ahead is not None:
            threading.Thread(target=job.ahead, name="ahead", daemon=True).start()
    on_main = [i for i, job in enumerate(jobs) if job.runner in MAIN_THREAD_RUNNERS]
    elsewhere = [i for i, job in enumerate(jobs) if job.runner not in MAIN_THREAD_RUNNERS]
    board: _Board[T] = _Board(elsewhere)
    workers = min(len(elsewhere), at_once - 1 if on_main else at_once)
    for number in range(workers):
        threading.Thread(
            target=board.work, args=(jobs,), name=f"benchmark-{number}", daemon=True
        ).start()
    for index in on_main:
        board.raise_failure()
        result = jobs[index].run()
        with board.lock:
            board.results[index] = result
    board.wait()
    return [board.results[i] for i in range(len(jobs))]


def _in_turn(job: Job[T]) -> T:
    if job.ahead is not None:
        job.ahead()
    return job.run()


class _Board(Generic[T]):
    """The worker threads' shared state: the jobs left, the results, the first failure."""

    def __init__(self, todo: list[int]) -> None:
        self.todo = list(reversed(todo))  # popped from the end: the given order
        self.results: dict[int, T] = {}
        self.failure: BaseException | None = None
        self.running = 0
        self.lock = threading.Condition()

    def work(self, jobs: Sequence[Job[T]]) -> None:
        while True:
            with self.lock:
                if not self.todo or self.failure is not None:
                    return
                index = self.todo.pop()
                self.running += 1
            try:
                result = jobs[index].run()
            except BaseException as exc:  # handed to the main thread, which raises it
                with self.lock:
                    self.failure = self.failure or exc
                    self.running -= 1
                    self.lock.notify_all()
                return
            with self.lock:
                self.results[index] = result
                self.running -= 1
                self.lock.notify_all()

    def raise_failure(self) -> None:
        with self.lock:
            if self.failure is not None:
                raise self.failure

    def wait(self) -> None:
        """Until every worker job is done (or one failed: raised here)."""
        with self.lock:
            while (self.todo or self.running) and self.failure is None:
                self.lock.wait(timeout=0.5)  # a timeout keeps Ctrl-C responsive
        self.raise_failure()
