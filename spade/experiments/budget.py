"""What the units not done yet will cost, read off the wall times the done ones recorded.

A unit's estimate is the median recorded wall time of its peers: the done units of the same
kind, arm and evaluation set (every seed's `spade/seedK/train` for `spade/seed3/train`, the
warm start and each rebuild for `warm/seed3/build`). A unit that found its weights on disk
records ~0 s and measures nothing, so it is no peer. The hosts the peers ran on come with
the estimate: a CPU without AVX-512 BF16 trains and generates about twice as slowly, so an
estimate made on other hosts is a floor there, not a forecast.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from spade.experiments.records import Experiment
from spade.experiments.units import Unit, selected, units

MEASURED_SECONDS = 1.0
"""A recorded wall time below this is a unit that found its work done, not a measure."""

PeerKey = tuple[str, str | None, str | None]


@dataclass(frozen=True)
class Estimate:
    unit: Unit
    seconds: float | None
    """The peers' median wall time; None when no peer has run."""
    peers: int
    hosts: tuple[str, ...]


def peer_key(unit: Unit) -> PeerKey:
    """Units whose wall times stand for one another: the same work on another seed."""
    if unit.kind == "warm":
        return ("warm", None, None)
    return (unit.kind, unit.arm, unit.eval_set)


def estimates(experiment: Experiment, only: Sequence[str] = ()) -> list[Estimate]:
    """An estimate for every unit not done (those `only` selects, prefixes as `run --only`)."""
    measured: dict[PeerKey, list[tuple[float, str]]] = {}
    missing: list[Unit] = []
    for unit in units(experiment.plan):
        record = experiment.unit_record(unit)
        if record is None:
            if not only or selected(unit.name, only):
                missing.append(unit)
            continue
        seconds = record.get("seconds")
        if isinstance(seconds, int | float) and seconds >= MEASURED_SECONDS:
            host = str(record.get("host") or "host not recorded")
            measured.setdefault(peer_key(unit), []).append((float(seconds), host))
    result = []
    for unit in missing:
        peers = measured.get(peer_key(unit), [])
        seconds = statistics.median(s for s, _ in peers) if peers else None
        hosts = tuple(sorted({_cpu(h) for _, h in peers}))
        result.append(Estimate(unit, seconds, len(peers), hosts))
    return result


def _cpu(host: str) -> str:
    """A recorded host line (`Intel(R) Xeon(R) Processor, AVX-512, 2 cores, 2026-12-06`)
    without its date."""
    return re.sub(r", \d{4}-\d{2}-\d{2}$", "", host)


def summary(found: Sequence[Estimate]) -> str:
    """One line: how many units, their estimated total, and what it rests on."""
    timed = [e for e in found if e.seconds is not None]
    total = sum(e.seconds or 0.0 for e in timed)
    hosts = sorted({h for e in timed for h in e.hosts})
    unknown = len(found) - len(timed)
    units = "unit" if len(found) == 1 else "units"
    line = f"{len(found)} {units} to run, about {total / 3600:.1f} h at the recorded pace"
    if unknown:
        line += f" plus {unknown} with no peer run yet"
    if hosts:
        line += f" (measured on: {'; '.join(hosts)})"
    return line
