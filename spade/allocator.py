"""tcmalloc for CPU runs: vLLM's CPU engine (and torch on a CPU) allocate faster under it.

vLLM's CPU backend asks for tcmalloc in LD_PRELOAD (it warns at every start without it); an
allocator can only be chosen when a process starts, so `spade-eval` and `spade-train` started
from their console scripts re-execute themselves once with it preloaded, on a Linux machine
without an NVIDIA GPU where the library is installed (install.sh installs it). Nothing about
what is computed changes, only how fast: 1.12x on prefill-heavy and 1.04x on decode-heavy
generation on a 2-core AMD EPYC, the same completions (`benchmarks/perf/allocator.py`,
figures in docs/install.md).
`SPADE_TCMALLOC=0` turns it off; a preload already naming tcmalloc is kept as it is.
"""

from __future__ import annotations

import ctypes.util
import os
import shutil
import sys
from collections.abc import Callable, Mapping

SWITCH = "SPADE_TCMALLOC"
"""`0`: never preload tcmalloc."""
DONE = "SPADE_TCMALLOC_PRELOADED"
"""Set in the re-executed process, so it never re-executes again."""


def tcmalloc_library() -> str | None:
    """tcmalloc's shared library as the loader finds it (e.g. `libtcmalloc_minimal.so.4`)."""
    return ctypes.util.find_library("tcmalloc_minimal") or ctypes.util.find_library("tcmalloc")


def preload_environment(
    environ: Mapping[str, str],
    library: str | None,
    cpu_only: bool,
    platform: str = sys.platform,
) -> dict[str, str] | None:
    """The environment to re-execute with, or None to run on as is."""
    if platform != "linux" or not cpu_only or library is None:
        return None
    if environ.get(SWITCH) == "0" or environ.get(DONE):
        return None
    preload = environ.get("LD_PRELOAD", "")
    if "tcmalloc" in preload:
        return None
    return {**environ, DONE: "1", "LD_PRELOAD": f"{library} {preload}".strip()}


def with_tcmalloc(main: Callable[[], int]) -> Callable[[], int]:
    """`main` behind a re-execution with tcmalloc preloaded (see the module doc); for console
    scripts only, since it replaces the calling process."""

    def run() -> int:
        cpu_only = shutil.which("nvidia-smi") is None
        environment = preload_environment(os.environ, tcmalloc_library(), cpu_only)
        if environment is not None:
            os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environment)
        return main()

    return run
