"""Shards of named tasks farmed over Ray workers, each worker with its own state.

`run_sharded` splits every task's ids (a benchmark's seeded samples) into contiguous shards,
keeps one shard in flight per worker and concatenates each task's shard results in id order,
so a task's merged result lists its samples exactly as one local call over all ids would.

A worker (`ShardWorker`, a Ray actor) configures the driver's sandbox in its own process, then
builds its state with `setup` (e.g. a policy backend behind the completion cache) the first
time it is asked, so a restarted worker builds it again. Both come with every call (a `_Job`,
stored once): the actor has no constructor arguments, which Ray would have to keep alive in its
object store to restart it.

Faults are Ray's: an actor whose process dies is restarted and its shard retried once
(`max_task_retries=1`); a second death fails the run with `ShardFailed`, naming the shard.
Only the shard in flight on a dead worker is run again; the shards already merged stay as they
are. An exception raised by the work itself is raised again on the driver as the same type
(`remote_errors`).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from spade.distributed.cluster import Cluster, actor_options
from spade.distributed.errors import ClusterError, ShardFailed
from spade.distributed.remote_errors import PackedError, pack_error
from spade.sandbox import SandboxConfig, configure, default_config, describe_backend

PLACEMENT_TIMEOUT_S = 120.0
"""How long workers may take to be placed and started before the run gives up."""
POLL_S = 0.5

Progress = Callable[[int], None]
Setup = Callable[[], tuple[Any, dict[str, Any]]]
"""Builds a worker's state and describes it (JSON-able), once per worker process."""
Work = Callable[[Any, "Shard", Progress], Any]
"""Runs one shard with the worker's state; reports samples done through the callback."""


@dataclass(frozen=True)
class Shard:
    task: str
    index: int
    count: int
    ids: tuple[str, ...]

    @property
    def label(self) -> str:
        span = f"{self.ids[0]} .. {self.ids[-1]}" if self.ids else "no samples"
        return f"{self.task} shard {self.index + 1}/{self.count} ({len(self.ids)} samples: {span})"


def split_ids(task: str, ids: Sequence[str], parts: int) -> list[Shard]:
    """`ids` as at most `parts` contiguous shards of near-equal size (one, if there are none)."""
    parts = max(1, min(parts, len(ids)))
    size, extra = divmod(len(ids), parts)
    shards, start = [], 0
    for index in range(parts):
        end = start + size + (index < extra)
        shards.append(Shard(task, index, parts, tuple(ids[start:end])))
        start = end
    return shards


@dataclass(frozen=True)
class Workers:
    """How many workers, and what each holds (a GPU each where a model runs on GPUs)."""

    count: int
    cpus: float = 1.0
    gpus: float = 0.0


@dataclass
class ShardedRun:
    results: dict[str, list[Any]]
    """Per task, the concatenation of its shards' results in shard (= id) order."""
    seconds: dict[str, float]
    """Per task, worker time summed over its shards."""
    workers: list[dict[str, Any]]
    """Each worker's description: `setup` (what its setup said), `node`, `pid` and `sandbox`
    (`spade.sandbox.describe_backend` there)."""
    retried: list[str] = field(default_factory=list)
    """Labels of the shards whose worker died once (and which then succeeded)."""


@dataclass(frozen=True)
class _Job:
    """What every call to a worker carries: the driver's sandbox choice, the worker's setup,
    the work, and the board (a Ray queue) where workers post progress and shard starts."""

    sandbox: SandboxConfig
    setup: Setup
    work: Work
    board: Any


class ShardWorker:
    """The Ray actor behind `run_sharded` (see the module docstring)."""

    def __init__(self) -> None:
        self._state: Any = None
        self._info: dict[str, Any] | None = None

    def place(self) -> str:
        """Answers once the worker is placed and started (nothing is built yet)."""
        return str(os.getpid())

    def describe(self, job: _Job) -> tuple[str, Any]:
        try:
            return "ok", self._ready(job)
        except Exception as exc:
            return "error", pack_error(exc)

    def run(self, job: _Job, shard: Shard) -> tuple[str, Any, float, int]:
        started, pid = time.perf_counter(), os.getpid()
        job.board.put_nowait(("start", shard.task, shard.index, pid))
        try:
            self._ready(job)
            report = partial(_report_done, job.board, shard)
            result = job.work(self._state, shard, report)
        except Exception as exc:
            return "error", pack_error(exc), time.perf_counter() - started, pid
        return "ok", result, time.perf_counter() - started, pid

    def _ready(self, job: _Job) -> dict[str, Any]:
        if self._info is None:
            import ray

            configure(job.sandbox)  # every sandbox worker this process starts uses it
            self._state, info = job.setup()
            self._info = {
                "setup": info,
                "node": ray.util.get_node_ip_address(),
                "pid": os.getpid(),
                "sandbox": describe_backend(),
            }
        return self._info


def _report_done(board: Any, shard: Shard, count: int) -> None:
    board.put_nowait(("done", shard.task, shard.index, count))


def run_sharded(
    cluster: Cluster,
    setup: Setup,
    tasks: Mapping[str, Sequence[str]],
    work: Work,
    workers: Workers,
    check: Callable[[list[dict[str, Any]]], None] | None = None,
    on_progress: Callable[[str, int], None] | None = None,
    on_retry: Callable[[Shard], None] | None = None,
) -> ShardedRun:
    """Run `work` over every task's ids on `workers.count` workers (see the module docstring).

    `check` sees every worker's description before any shard runs (e.g. that all workers
    loaded the same weights) and may raise; `on_progress(task, done)` gets each task's count
    of samples done; `on_retry(shard)` is told when a shard's worker died and it runs again."""
    ray = cluster.ray
    shards = [s for task, ids in tasks.items() for s in split_ids(task, ids, workers.count)]
    from ray.util.queue import Queue

    board = Queue(actor_options={"num_cpus": 0})  # progress and shard starts, from the workers
    actor = ray.remote(ShardWorker).options(
        **actor_options(
            workers.cpus, workers.gpus, max_restarts=len(shards) + 1, max_task_retries=1
        )
    )
    pool = [actor.remote() for _ in range(workers.count)]
    # The job goes with every call: a restarted worker gets it from the call Ray retries;
    # stored once, it stays alive while this driver holds the reference.
    job = ray.put(_Job(default_config(), setup, work, board))
    try:
        _placed(ray, pool, workers)
        outcomes = _get(ray, [worker.describe.remote(job) for worker in pool], "starting a worker")
        described = [_unpacked(outcome) for outcome in outcomes]
        if check is not None:
            check(described)
        pids = [int(worker["pid"]) for worker in described]
        farm = _Farm(ray, pool, pids, job, board, on_progress, on_retry)
        finished = farm.run(shards)
    finally:
        for worker in pool:
            ray.kill(worker)
        board.shutdown(force=True)
    results: dict[str, list[Any]] = {task: [] for task in tasks}
    seconds: dict[str, float] = dict.fromkeys(tasks, 0.0)
    for shard in shards:
        value, spent = finished[(shard.task, shard.index)]
        results[shard.task].extend(value)
        seconds[shard.task] += spent
    return ShardedRun(results, seconds, described, farm.retried)


def _placed(ray: Any, pool: list[Any], workers: Workers) -> None:
    waiting = [worker.place.remote() for worker in pool]
    ready, _ = ray.wait(waiting, num_returns=len(waiting), timeout=PLACEMENT_TIMEOUT_S)
    if len(ready) < len(waiting):
        free = ray.available_resources()
        raise ClusterError(
            f"only {len(ready)} of {len(pool)} Ray workers ({workers.cpus:g} CPU, "
            f"{workers.gpus:g} GPU each) started within {PLACEMENT_TIMEOUT_S:g} s; free now: "
            f"{free.get('CPU', 0):g} CPUs, {free.get('GPU', 0):g} GPUs (other jobs may hold "
            "the rest, or no single node fits one worker)"
        )
    _get(ray, ready, "starting a worker")


def _unpacked(outcome: tuple[str, Any]) -> Any:
    status, value = outcome
    if status == "error":
        assert isinstance(value, PackedError)
        raise value.rebuild(with_traceback=True)
    return value


def _get(ray: Any, refs: list[Any], doing: str) -> list[Any]:
    try:
        return list(ray.get(refs))
    except ray.exceptions.RayError as exc:
        raise ClusterError(f"a Ray worker died while {doing}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__)[:300]


class _Farm:
    """One shard in flight per worker; progress read from the board.

    A restart shows as a new process id: each worker's pid is known from its description, and
    a shard that starts or ends on another pid ran on a restarted worker, i.e. Ray's retry of
    it (a kill can land before the first attempt posts anything, so the pid is what counts)."""

    def __init__(
        self,
        ray: Any,
        pool: list[Any],
        pids: list[int],
        job: Any,
        board: Any,
        on_progress: Callable[[str, int], None] | None,
        on_retry: Callable[[Shard], None] | None,
    ) -> None:
        self.ray, self.pool, self.pids, self.job, self.board = ray, pool, pids, job, board
        self.on_progress, self.on_retry = on_progress, on_retry
        self.done: dict[tuple[str, int], int] = {}
        self.retried: list[str] = []
        self.on_worker: dict[tuple[str, int], tuple[int, Shard]] = {}

    def run(self, shards: list[Shard]) -> dict[tuple[str, int], tuple[list[Any], float]]:
        pending, idle = deque(shards), list(range(len(self.pool)))
        running: dict[Any, tuple[int, Shard]] = {}
        finished: dict[tuple[str, int], tuple[list[Any], float]] = {}
        while pending or running:
            while pending and idle:
                worker, shard = idle.pop(), pending.popleft()
                self.on_worker[(shard.task, shard.index)] = (worker, shard)
                running[self.pool[worker].run.remote(self.job, shard)] = (worker, shard)
            ready, _ = self.ray.wait(list(running), num_returns=1, timeout=POLL_S)
            self._read_board()
            for ref in ready:
                worker, shard = running.pop(ref)
                try:
                    status, value, spent, pid = self.ray.get(ref)
                except self.ray.exceptions.RayError as exc:
                    raise ShardFailed(
                        f"{shard.label}: its Ray worker died on the retry too: {_first_line(exc)}"
                    ) from None
                if status == "error":
                    raise value.rebuild(with_traceback=True)
                self._ran_on(shard, pid)
                finished[(shard.task, shard.index)] = (list(value), spent)
                idle.append(worker)
        self._read_board()
        return finished

    def _ran_on(self, shard: Shard, pid: int) -> None:
        worker, _ = self.on_worker[(shard.task, shard.index)]
        if pid == self.pids[worker]:
            return
        self.pids[worker] = pid  # Ray restarted the worker and runs the shard again
        self.retried.append(shard.label)
        self._count(shard, 0)
        if self.on_retry:
            self.on_retry(shard)

    def _read_board(self) -> None:
        for kind, task, index, value in self.board.get_nowait_batch(self.board.qsize()):
            _, shard = self.on_worker[(task, index)]
            if kind == "start":
                self._ran_on(shard, int(value))
            else:
                self._count(shard, self.done.get((task, index), 0) + int(value))

    def _count(self, shard: Shard, done: int) -> None:
        self.done[(shard.task, shard.index)] = done
        if self.on_progress:
            task = shard.task
            self.on_progress(task, sum(n for (t, _), n in self.done.items() if t == task))
