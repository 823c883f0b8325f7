"""The unit launcher: a runner stopped with SIGTERM takes its unit's process down with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_runner_killed_with_sigterm_stops_the_unit_it_launched(tmp_path: Path) -> None:
    pid_file = tmp_path / "unit.pid"
    unit = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(300)"
    runner = (
        "import sys\n"
        "from spade.experiments.runner import subprocess_launcher\n"
        f"sys.exit(subprocess_launcher([sys.executable, '-c', {unit!r}]))\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", runner])
    deadline = time.monotonic() + 120
    while not (pid_file.is_file() and pid_file.read_text()):
        assert parent.poll() is None, "the runner ended before its unit started"
        assert time.monotonic() < deadline, "the unit never started"
        time.sleep(0.1)
    unit_pid = int(pid_file.read_text())
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(timeout=60) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 10
    while not _gone(unit_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _gone(unit_pid), "the unit's process outlived the runner"
