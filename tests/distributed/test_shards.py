"""run_sharded on a real Ray cluster: merging in id order, a killed worker's shard retried once
(and only that shard), a second death naming the shard, work errors raised as their own type,
and the driver's sandbox choice reaching the workers."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from spade.distributed import Cluster, ShardFailed, Workers, run_sharded, split_ids
from spade.sandbox import SandboxConfig, configure, describe_backend
from tests.distributed import faults
from tests.distributed.conftest import RayHead

TASKS = {"a": [str(i) for i in range(1, 8)], "b": [str(i) for i in range(10, 14)]}


@pytest.fixture
def cluster(ray_head: RayHead) -> Iterator[Cluster]:
    with Cluster(ray_head.address) as joined:
        yield joined


def runs_of(log: Path) -> dict[str, int]:
    return {path.name: len(path.read_text().splitlines()) for path in log.iterdir()}


def test_split_ids_keeps_order_and_balances() -> None:
    shards = split_ids("t", [str(i) for i in range(7)], 3)
    assert [s.ids for s in shards] == [("0", "1", "2"), ("3", "4"), ("5", "6")]
    assert [len(split_ids("t", ["x"], 4)), len(split_ids("t", [], 2))] == [1, 1]
    assert split_ids("t", [], 2)[0].label == "t shard 1/1 (0 samples: no samples)"


def test_a_killed_worker_has_its_shard_retried_once(cluster: Cluster, tmp_path: Path) -> None:
    retried: list[str] = []
    progress: dict[str, int] = {}
    work = partial(faults.die_on_first_try, ("a", 0))
    run = run_sharded(cluster, partial(faults.setup, str(tmp_path)), TASKS, work, Workers(2),
                      on_progress=progress.__setitem__,
                      on_retry=lambda shard: retried.append(shard.label))  # fmt: skip
    assert run.results == {task: [int(i) ** 2 for i in ids] for task, ids in TASKS.items()}
    assert retried == run.retried == ["a shard 1/2 (4 samples: 1 .. 4)"]
    # The dead worker's shard ran twice; every other shard once (nothing scored was redone).
    assert runs_of(tmp_path) == {"a-0": 2, "a-1": 1, "b-0": 1, "b-1": 1}
    assert progress == {"a": 7, "b": 4}
    assert len(run.workers) == 2 and all(w["setup"] == {"log": str(tmp_path)} for w in run.workers)


def test_a_shard_whose_worker_dies_twice_fails_naming_it(cluster: Cluster, tmp_path: Path) -> None:
    work = partial(faults.always_die, ("b", 1))
    with pytest.raises(ShardFailed, match=r"^b shard 2/2 \(2 samples: 12 \.\. 13\): its Ray "
                       "worker died on the retry too"):  # fmt: skip
        run_sharded(cluster, partial(faults.setup, str(tmp_path)), TASKS, work, Workers(2))
    assert runs_of(tmp_path)["b-1"] == 2  # one retry, no more


def test_work_errors_come_back_as_their_own_type(cluster: Cluster, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^a: unknown sample ids \['1'\]$") as caught:
        run_sharded(cluster, partial(faults.setup, str(tmp_path)), TASKS, faults.reject,
                    Workers(1))  # fmt: skip
    assert "faults.py" in str(caught.value.__cause__)  # the worker's traceback, chained


def test_workers_use_the_drivers_sandbox_choice(cluster: Cluster, tmp_path: Path) -> None:
    chosen = SandboxConfig(backend="bwrap", call_timeout_s=7.0)
    configure(chosen)
    try:
        run = run_sharded(cluster, partial(faults.setup, str(tmp_path)), {"a": ["1"]},
                          faults.square, Workers(1))  # fmt: skip
    finally:
        configure(None)
    assert run.workers[0]["sandbox"] == describe_backend(chosen)
    assert run.workers[0]["sandbox"]["requested"] == "bwrap"
