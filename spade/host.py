"""What a figure was measured on: the CPU model, its AVX-512 kind, the cores, the date.

CPU timings move with the machine (torch picks other kernels with AVX-512, again with its BF16
instructions and with AMX) and with the day's load, so every `benchmarks/perf/` script prints
this line beside its figures. The same kernels also decide whether a fine-tune rebuilds bit for
bit (docs/experiments.md), so experiment units record it too.
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
    bf16: bool = False
    """AVX-512 BF16 (`avx512_bf16`): native bf16 dot products, about twice the fp32 pace."""
    amx: bool = False
    """AMX tiles (`amx_bf16`): Intel's matrix unit, which oneDNN uses for bf16 matmuls."""

    def __str__(self) -> str:
        cores = f"{self.cores} cores"
        if self.cores != self.machine_cores:
            cores += f" of {self.machine_cores}"
        return f"host: {self.cpu}, {self.isa()}, {cores}, {self.date}"

    def isa(self) -> str:
        """`AVX-512`, `AVX-512 BF16`, `AVX-512 BF16, AMX`, `no AVX-512` or `AVX-512 unknown`."""
        if self.avx512 is None:
            return "AVX-512 unknown"
        if not self.avx512:
            return "no AVX-512"
        return "AVX-512" + " BF16" * self.bf16 + ", AMX" * self.amx


def this_host(cpuinfo: Path = CPUINFO) -> Host:
    """This machine, read from `cpuinfo` where there is one (Linux)."""
    try:
        fields = _first_cpu(cpuinfo.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        fields = {}
    flags = fields.get("flags")
    names = set(flags.split()) if flags is not None else set()
    machine_cores = os.cpu_count() or 1
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(machine_cores)
    return Host(
        cpu=fields.get("model name") or platform.processor() or "unknown CPU",
        avx512=None if flags is None else "avx512f" in names,
        cores=len(usable),
        machine_cores=machine_cores,
        date=datetime.now(UTC).date().isoformat(),
        bf16="avx512_bf16" in names,
        amx="amx_bf16" in names,
    )


def _first_cpu(text: str) -> dict[str, str]:
    """The `key : value` lines of the first processor's block (all blocks name one model)."""
    block = text.split("\n\n", 1)[0]
    pairs = (line.split(":", 1) for line in block.splitlines() if ":" in line)
    return {key.strip(): value.strip() for key, value in pairs}
