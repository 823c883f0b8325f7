"""What can go wrong on a cluster, as one-line errors."""

from __future__ import annotations

from spade.sandbox import SandboxUnavailable


class ClusterError(RuntimeError):
    """The cluster cannot be reached, lacks the CPUs or GPUs asked for, or its workers cannot
    start; the message is one line naming the address or the resource."""


class ShardFailed(RuntimeError):
    """A shard's worker died on the shard's retry too; the message names the shard."""


class EnvHostLost(SandboxUnavailable):
    """The Ray actor hosting env workers is gone (its node died, or it was killed).

    Like a missing sandbox, this is no env's fault: the episodes on it cannot go on, so the
    run stops (one line) instead of scoring them as broken envs."""
