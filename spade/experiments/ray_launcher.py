"""Units on a Ray cluster: each unit's command runs as a Ray task on a node with its CPUs.

The cluster's nodes must see the same filesystem as the driver (the repository, `runs/` and
`experiments/`): a unit reads its config and writes its run directory there, and the driver
records the artifacts after the task returns. Independent units (different seeds or arms)
run at the same time, as many as the cluster's CPUs allow.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from typing import Any

from spade.distributed.cluster import Cluster, actor_options


def _run(argv: list[str], cwd: str) -> int:
    """On the worker: the unit's command, its output in the node's Ray logs."""
    return subprocess.run(argv, cwd=cwd, check=False).returncode


class RayLauncher:
    """A launcher whose commands run as Ray tasks of `cpus` CPUs each."""

    def __init__(self, address: str, cpus: float = 2.0) -> None:
        self.cluster = Cluster(address)
        self.cpus = cpus
        self._task: Any = self.cluster.ray.remote(_run)

    def __call__(self, argv: Sequence[str]) -> int:
        options = actor_options(self.cpus)
        reference = self._task.options(**options).remote(list(argv), os.getcwd())
        status: int = self.cluster.ray.get(reference)
        return status

    def workers(self) -> int:
        """How many units fit on the cluster at once."""
        return max(1, int(self.cluster.resources().cpus // self.cpus))

    def close(self) -> None:
        self.cluster.close()
