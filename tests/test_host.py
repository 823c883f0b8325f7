"""The host line every benchmarks/perf/ script prints: CPU model, AVX-512 kind, cores, date."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from spade.host import this_host

BLOCK = """processor\t: {n}
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8488C
flags\t\t: fpu sse2 avx2 {flags}
"""


def cpuinfo(tmp_path: Path, flags: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text("\n".join(BLOCK.format(n=n, flags=flags) for n in range(2)), "utf-8")
    return path


def test_the_model_and_avx512_come_from_the_first_processor(tmp_path: Path):
    host = this_host(cpuinfo(tmp_path, "avx512f avx512_bf16"))
    assert (host.cpu, host.avx512) == ("Intel(R) Xeon(R) Platinum 8488C", True)
    assert host.cores == len(os.sched_getaffinity(0))
    assert host.date == datetime.now(UTC).date().isoformat()
    assert str(host).startswith("host: Intel(R) Xeon(R) Platinum 8488C, AVX-512 BF16, ")


def test_the_kind_of_avx512_is_named(tmp_path: Path):
    """BF16 and AMX change the kernels torch runs: the pace and the last bits of a fine-tune."""
    assert ", AVX-512, " in str(this_host(cpuinfo(tmp_path, "avx512f avx512_vnni")))
    sapphire = this_host(cpuinfo(tmp_path, "avx512f avx512_bf16 amx_bf16 amx_tile"))
    assert ", AVX-512 BF16, AMX, " in str(sapphire)
    assert (sapphire.bf16, sapphire.amx) == (True, True)
    no_foundation = this_host(cpuinfo(tmp_path, "avx_vnni avx512_bf16"))  # a flag without avx512f
    assert ", no AVX-512, " in str(no_foundation)


def test_no_avx512_without_its_foundation_flag(tmp_path: Path):
    host = this_host(cpuinfo(tmp_path, "avx_vnni"))  # Alder Lake: VNNI without AVX-512
    assert host.avx512 is False and ", no AVX-512, " in str(host)


def test_without_cpuinfo_avx512_is_unknown_not_guessed(tmp_path: Path):
    host = this_host(tmp_path / "missing")
    assert host.avx512 is None and "AVX-512 unknown" in str(host) and host.cpu
