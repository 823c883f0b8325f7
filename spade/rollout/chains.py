"""Chains of dependent turns: the critical path of a run on one engine.

Each model call of a sample (a multi-turn episode's turns, an ACEBench user's replies) waits
for the call before it, so however wide the engine batches, a run takes at least as long as
its longest chain of calls. `Chains` counts, for every (phase, sample id), the calls made and
the time from the start of the first to the end of the last; the longest chain names the
benchmark and sample that bound the run's wall time, so a user can see where time goes.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spade.rollout.requests import GenRequest


@dataclass
class Chain:
    """One sample's calls, in order: each waited for the one before."""

    phase: str
    sample_id: str
    turns: int
    first: float
    """time.perf_counter() at the start of its first call."""
    last: float
    """time.perf_counter() at the end of its last call."""

    @property
    def seconds(self) -> float:
        return self.last - self.first

    def as_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.phase,
            "sample_id": self.sample_id,
            "turns": self.turns,
            "seconds": round(self.seconds, 3),
        }


class Chains:
    """Every sample's chain of calls; callable from several threads."""

    def __init__(self) -> None:
        self._chains: dict[tuple[str, str], Chain] = {}
        self._lock = threading.Lock()

    def record(self, requests: Sequence[GenRequest], started: float, ended: float) -> None:
        """One call answered `requests` between `started` and `ended` (perf_counter times):
        one more turn for each sample it served (a request of n draws is one turn)."""
        with self._lock:
            for key in dict.fromkeys((r.phase, r.sample_id) for r in requests):
                chain = self._chains.get(key)
                if chain is None:
                    self._chains[key] = Chain(*key, turns=1, first=started, last=ended)
                else:
                    chain.turns += 1
                    chain.last = max(chain.last, ended)

    def longest(self) -> Chain | None:
        """The chain of most turns (the slower one where two have as many)."""
        with self._lock:
            chains = list(self._chains.values())
        return max(chains, key=lambda c: (c.turns, c.seconds), default=None)

    def slowest(self) -> Chain | None:
        """The chain that took longest from its first call to its last."""
        with self._lock:
            chains = list(self._chains.values())
        return max(chains, key=lambda c: (c.seconds, c.turns), default=None)

    def summary(self) -> dict[str, Any] | None:
        """The results record: the longest chain and the slowest (None before any call)."""
        longest, slowest = self.longest(), self.slowest()
        if longest is None or slowest is None:
            return None
        return {"longest": longest.as_dict(), "slowest": slowest.as_dict()}


def describe_critical_path(summary: dict[str, Any] | None) -> str | None:
    """One line for the end of a run, from `Chains.summary()`."""
    if summary is None:
        return None
    longest, slowest = summary["longest"], summary["slowest"]
    line = (
        f"critical path: {longest['turns']} dependent turns in {longest['benchmark']} "
        f"({longest['sample_id']}, {longest['seconds']:.1f} s from its first turn to its last)"
    )
    if (slowest["benchmark"], slowest["sample_id"]) != (
        longest["benchmark"],
        longest["sample_id"],
    ):
        line += (
            f"; slowest chain: {slowest['benchmark']} ({slowest['sample_id']}, "
            f"{slowest['turns']} turn{'s' * (slowest['turns'] != 1)}, "
            f"{slowest['seconds']:.1f} s)"
        )
    return line
