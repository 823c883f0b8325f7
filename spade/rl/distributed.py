"""`World`: the processes of a data-parallel update (`torchrun` / `accelerate launch`).

Single process (no launcher, or WORLD_SIZE=1) is `World(0, 1, None)`: nothing is
initialised and every collective below returns at once. Under a launcher the processes join
one group through accelerate's `PartialState` (NCCL on GPUs, gloo on CPU), each on its own
device (cuda:LOCAL_RANK). Rank 0 is the driver; the others follow it (`Learner.follow`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist

_BUCKET_ELEMENTS = 1 << 25
"""Most elements flattened into one collective (128 MiB of float32): bounds the extra memory."""
_COLLECTIVE_TIMEOUT = timedelta(hours=24)
"""Followers wait in a collective while rank 0 does a whole iteration's rollouts (minutes to
hours; NCCL's default 10 minutes would abort them). A process that dies is the launcher's to
catch: it stops the others."""


@dataclass(frozen=True)
class World:
    """This process among those of an update; with one process every collective is a no-op."""

    rank: int
    size: int
    device: torch.device | None
    """This process's device in a distributed run; None single-process (the config decides)."""

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def broadcast_object(self, obj: Any) -> Any:
        """Rank 0's `obj` (picklable) on every rank; the others' argument is ignored."""
        if self.size == 1:
            return obj
        box = [obj if self.is_main else None]
        dist.broadcast_object_list(box, src=0, device=self.device)
        return box[0]

    def all_reduce_sum_(self, tensors: Sequence[torch.Tensor]) -> None:
        """Sum each tensor over all ranks, in place (same tensors, same order on every rank)."""
        if self.size > 1:
            _flat_apply(tensors, dist.all_reduce)

    def all_reduce_floats(self, values: Sequence[float]) -> list[float]:
        """Each value summed over all ranks (float64, so the sum is exact enough for metrics)."""
        if self.size == 1 or not values:
            return list(values)
        flat = torch.tensor(values, dtype=torch.float64, device=self.device)
        dist.all_reduce(flat)
        return flat.tolist()

    def broadcast_parameters(self, model: torch.nn.Module) -> None:
        """Rank 0's parameters and buffers on every rank, so all start from identical weights."""
        if self.size > 1:
            with torch.no_grad():
                tensors = [t.data for t in (*model.parameters(), *model.buffers())]
                _flat_apply(tensors, lambda flat: dist.broadcast(flat, src=0))


SINGLE_PROCESS = World(0, 1, None)
"""The world of a run without a launcher: every collective is a no-op."""


def launched_world_size() -> int:
    """Processes started by `torchrun` / `accelerate launch` (1 without a launcher)."""
    return int(os.environ.get("WORLD_SIZE", "1"))


def launched_rank() -> int:
    """This process's rank under a launcher, without joining the group (0 without one)."""
    return int(os.environ.get("RANK", "0")) if launched_world_size() > 1 else 0


def join_world(device: str = "auto") -> World:
    """This process's `World`; under a launcher, joins the process group (once per process).

    `device` is `UpdateConfig.device`: 'auto' and 'cuda' give each process cuda:LOCAL_RANK
    (CPU with gloo when there is no GPU), 'cpu' forces gloo on CPU.
    """
    if launched_world_size() <= 1:
        return SINGLE_PROCESS
    if device not in ("auto", "cuda", "cpu"):
        raise ValueError(
            f"UpdateConfig.device={device!r} would put every process of a distributed run on "
            "one device; use 'auto' (each process takes cuda:LOCAL_RANK) or 'cpu'"
        )
    from accelerate import PartialState

    # PartialState is a per-process singleton: a second call returns the same group.
    cpu = device == "cpu" or not torch.cuda.is_available()
    state = PartialState(cpu=cpu, timeout=_COLLECTIVE_TIMEOUT)
    placed = torch.device("cpu") if state.device.type == "cpu" else state.device  # not cpu:0
    return World(state.process_index, state.num_processes, placed)


def _flat_apply(tensors: Sequence[torch.Tensor], op: Callable[[torch.Tensor], Any]) -> None:
    """Apply an in-place collective to the tensors through a few flat buffers, not one call
    per tensor (hundreds of small calls are latency-bound)."""
    for bucket in _buckets(tensors):
        if len(bucket) == 1 and bucket[0].is_contiguous():
            op(bucket[0])
            continue
        flat = torch.cat([t.reshape(-1) for t in bucket])
        op(flat)
        for t, part in zip(bucket, flat.split([t.numel() for t in bucket]), strict=True):
            t.copy_(part.view_as(t))


def _buckets(tensors: Sequence[torch.Tensor]) -> Iterator[list[torch.Tensor]]:
    """Consecutive runs of one dtype and device, of at most `_BUCKET_ELEMENTS` elements each
    (a larger tensor goes alone)."""
    bucket: list[torch.Tensor] = []
    elements = 0
    for t in tensors:
        if bucket and (
            (t.dtype, t.device) != (bucket[0].dtype, bucket[0].device)
            or elements + t.numel() > _BUCKET_ELEMENTS
        ):
            yield bucket
            bucket, elements = [], 0
        bucket.append(t)
        elements += t.numel()
    if bucket:
        yield bucket
