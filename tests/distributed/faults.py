"""Setups and work functions that the shard tests run on Ray workers.

Each work function gets the worker's state (here the log folder `setup` returned), the shard
and the progress callback. A separate, light module (standard library only, plus the `Shard`
type): the workers import it by name (their working directory is the driver's, the repository
root), and a light import keeps the workers' start cheap. Each shard run appends a line to
`<log>/<task>-<index>`, so a test can count how often each shard ran; the faults are real: the
worker process kills itself with SIGKILL, as the kernel's OOM killer or a lost node would end
it.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from spade.distributed import Shard


def setup(log: str) -> tuple[str, dict[str, Any]]:
    return log, {"log": log}


def _ran(log: str, shard: Shard) -> None:
    with (Path(log) / f"{shard.task}-{shard.index}").open("a") as out:
        out.write(f"{os.getpid()}\n")


def square(log: str, shard: Shard, progress: Any) -> list[int]:
    _ran(log, shard)
    values = [int(i) ** 2 for i in shard.ids]
    progress(len(values))
    return values


def die_on_first_try(victim: tuple[str, int], log: str, shard: Shard, progress: Any) -> list[int]:
    """Shard `victim`'s worker is killed the first time it runs it."""
    first = not (Path(log) / f"{shard.task}-{shard.index}").exists()
    if (shard.task, shard.index) == tuple(victim) and first:
        _ran(log, shard)
        os.kill(os.getpid(), signal.SIGKILL)
    return square(log, shard, progress)


def always_die(victim: tuple[str, int], log: str, shard: Shard, progress: Any) -> list[int]:
    """Shard `victim`'s worker is killed every time it runs it."""
    if (shard.task, shard.index) == tuple(victim):
        _ran(log, shard)
        os.kill(os.getpid(), signal.SIGKILL)
    return square(log, shard, progress)


def reject(log: str, shard: Shard, progress: Any) -> list[int]:
    raise ValueError(f"{shard.task}: unknown sample ids [{shard.ids[0]!r}]")
