"""spade.allocator: console scripts re-execute once with tcmalloc preloaded on a CPU machine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from spade.allocator import DONE, SWITCH, preload_environment, tcmalloc_library

LIB = "libtcmalloc_minimal.so.4"


def test_a_cpu_linux_machine_with_the_library_preloads_it_once_before_any_other_preload() -> None:
    environment = preload_environment({"LD_PRELOAD": "libfoo.so"}, LIB, cpu_only=True)
    assert environment is not None
    assert environment["LD_PRELOAD"] == f"{LIB} libfoo.so" and environment[DONE] == "1"
    assert preload_environment(environment, LIB, cpu_only=True) is None  # never twice


@pytest.mark.parametrize(
    ("environ", "library", "cpu_only", "platform"),
    [
        ({}, None, True, "linux"),  # not installed
        ({}, LIB, False, "linux"),  # a GPU machine
        ({}, LIB, True, "darwin"),
        ({SWITCH: "0"}, LIB, True, "linux"),  # turned off
        ({"LD_PRELOAD": "/opt/libtcmalloc.so"}, LIB, True, "linux"),  # the user's own
    ],
)
def test_no_re_execution_where_it_does_not_apply(
    environ: dict[str, str], library: str | None, cpu_only: bool, platform: str
) -> None:
    assert preload_environment(environ, library, cpu_only, platform) is None


PROBE = """
import os, sys
from spade.allocator import with_tcmalloc

def main():
    loaded = "tcmalloc" in open("/proc/self/maps").read()
    print(loaded, os.environ.get("SPADE_TCMALLOC_PRELOADED"), sys.argv[1:])
    return 3

sys.exit(with_tcmalloc(main)())
"""


@pytest.mark.skipif(
    sys.platform != "linux" or tcmalloc_library() is None or shutil.which("nvidia-smi"),
    reason="needs a Linux CPU machine with tcmalloc installed (install.sh installs it)",
)
@pytest.mark.parametrize(("switch", "expected"), [(None, "True 1"), ("0", "False None")])
def test_the_re_executed_process_runs_with_tcmalloc_loaded_and_the_same_arguments(
    switch: str | None, expected: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in (SWITCH, DONE, "LD_PRELOAD")}
    if switch is not None:
        env[SWITCH] = switch
    result = subprocess.run([sys.executable, "-c", PROBE, "--flag", "x y"], env=env,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 3, result.stderr
    assert result.stdout.strip() == f"{expected} ['--flag', 'x y']"
