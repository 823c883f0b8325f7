"""Run whole untrusted programs (code-benchmark solutions with their tests) in the sandbox.

Each program runs in a child that a sandbox worker forks for it (`op_run_program` in
`_worker.py`): a clean interpreter per program for a few ms, against ~70-150 ms for
starting a fresh bubblewrap worker per program (`benchmarks/perf/program_throughput.py`).
A program passes only when it exited with status 0 after its last statement ran (an early
`sys.exit(0)` or `os._exit(0)` is a failure); its output goes nowhere.

`ProgramRunner` keeps one worker for many programs; `run_programs` spreads a batch over a
small pool of them. The worker kills a program at its time limit and everything it left
running; a worker that itself stops answering, dies, or found processes that escaped a
program's process group is killed and replaced before the next program.
"""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from spade.sandbox.config import SandboxConfig
from spade.sandbox.errors import EnvCallError, SandboxError, SandboxTimeout
from spade.sandbox.worker import SandboxWorker

ProgramStatus = Literal["passed", "failed", "timeout", "crashed"]
# The worker needs a moment beyond the program's own limit to fork, kill and clean up.
_REPLY_MARGIN_S = 5.0
# A fresh worker now and then keeps the worker's own CPU-time rlimit (fork and clean-up
# costs ~1 ms each) far from `SandboxConfig.cpu_seconds`.
_PROGRAMS_PER_WORKER = 500


@dataclass(frozen=True)
class ProgramResult:
    """How one program ended. `passed` is `status == "passed"`."""

    passed: bool
    status: ProgramStatus
    detail: str
    """Why it did not pass (exception and line, timeout, signal); empty when it passed."""
    seconds: float


class ProgramRunner:
    """One sandbox worker running programs one after another. Not thread-safe."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.worker = SandboxWorker(config)
        self._runs = 0

    def run(self, source: str, timeout_s: float = 10.0) -> ProgramResult:
        if self._runs >= _PROGRAMS_PER_WORKER:
            self.worker.close()
            self._runs = 0
        self._runs += 1
        started = time.perf_counter()
        try:
            reply = self.worker.call(
                "run_program",
                source=source,
                timeout_s=timeout_s,
                timeout=timeout_s + _REPLY_MARGIN_S + self._start_allowance(),
            )
        except SandboxTimeout:
            return _result("timeout", f"the program exceeded its {timeout_s:g} s limit", started)
        except EnvCallError as exc:  # the worker could not run it at all (e.g. fork failed)
            self.worker.close()
            return _result("crashed", f"the sandbox could not run the program: {exc}", started)
        except SandboxError as exc:  # SandboxCrash, SandboxOutputLimit: worker already gone
            return _result("crashed", str(exc), started)
        if reply.get("strays"):
            # Processes escaped the program's group; they are dead now, but a fresh worker
            # is the only state we can vouch for.
            self.worker.close()
        status: ProgramStatus = reply["status"]
        return ProgramResult(status == "passed", status, reply["detail"], reply["seconds"])

    def _start_allowance(self) -> float:
        return 0.0 if self.worker.alive else self.worker.config.load_timeout_s

    def close(self) -> None:
        self.worker.close()

    def __enter__(self) -> ProgramRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _result(status: ProgramStatus, detail: str, started: float) -> ProgramResult:
    return ProgramResult(False, status, detail, time.perf_counter() - started)


def run_program(
    source: str, timeout_s: float = 10.0, config: SandboxConfig | None = None
) -> ProgramResult:
    """Run one program in a fresh sandbox worker (for many programs use `run_programs`)."""
    with ProgramRunner(config) as runner:
        return runner.run(source, timeout_s)


def default_parallelism() -> int:
    """One worker per usable CPU core: the programs are CPU-bound."""
    return max(1, len(os.sched_getaffinity(0)))


def run_programs(
    sources: Sequence[str],
    timeout_s: float = 10.0,
    config: SandboxConfig | None = None,
    parallelism: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[ProgramResult]:
    """Run every program over a pool of `parallelism` workers; results in input order.

    `progress` is called with each program's index as it finishes (from pool threads)."""
    workers = min(parallelism or default_parallelism(), len(sources)) or 1
    runners: queue.SimpleQueue[ProgramRunner] = queue.SimpleQueue()
    for _ in range(workers):
        runners.put(ProgramRunner(config))

    def run_one(index: int) -> ProgramResult:
        runner = runners.get()
        try:
            return runner.run(sources[index], timeout_s)
        finally:
            runners.put(runner)
            if progress is not None:
                progress(index)

    try:
        # Threads suffice: each one only waits on its worker's pipe (the GIL is released).
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(run_one, range(len(sources))))
    finally:
        while not runners.empty():
            runners.get().close()


__all__ = [
    "ProgramResult",
    "ProgramRunner",
    "default_parallelism",
    "run_program",
    "run_programs",
]
