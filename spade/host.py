"""What a speed figure was measured on: the CPU model, AVX-512 or not, the cores, the date.

CPU timings move with the machine (torch picks other kernels with AVX-512) and with the day's
load, so every `benchmarks/perf/` script prints this line beside its figures.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class Host:
    cpu: str
    avx512: bool | None
    """Whether the CPU has AVX-512 (its foundation, `avx512f`); None: flags unknown."""
    cores: int
    """Logical cores this process may run on."""
    machine_cores: int
    date: str
    """UTC, ISO 8601."""

    def __str__(self) -> str:
        avx512 = {True: "AVX-512", False: "no AVX-512", None: "AVX-512 unknown"}[self.avx512]
        cores = f"{self.cores} cores"
        if self.cores != self.machine_cores:
            cores += f" of {self.machine_cores}"
        return f"host: {self.cpu}, {avx512}, {cores}, {self.date}"


def this_host(cpuinfo: Path = CPUINFO) -> Host:
    """This machine, read from `cpuinfo` where there is one (Linux)."""
    try:
        fields = _first_cpu(cpuinfo.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        fields = {}
    flags = fields.get("flags")
    machine_cores = os.cpu_count() or 1
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(machine_cores)
    return Host(
        cpu=fields.get("model name") or platform.processor() or "unknown CPU",
        avx512=None if flags is None else "avx512f" in flags.split(),
        cores=len(usable),
        machine_cores=machine_cores,
        date=datetime.now(UTC).date().isoformat(),
    )


def _first_cpu(text: str) -> dict[str, str]:
    """The `key : value` lines of the first processor's block (all blocks name one model)."""
    block = text.split("\n\n", 1)[0]
    pairs = (line.split(":", 1) for line in block.splitlines() if ":" in line)
    return {key.strip(): value.strip() for key, value in pairs}
