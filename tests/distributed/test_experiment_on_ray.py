"""Experiment units as tasks on a real Ray cluster (127.0.0.1): the command runs on a worker,
in the driver's working directory, and its exit status comes back."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from spade.experiments.ray_launcher import RayLauncher
from tests.distributed.conftest import RayHead


@pytest.mark.slow
def test_a_units_command_runs_on_the_cluster(
    ray_head: RayHead, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    launcher = RayLauncher(ray_head.address, cpus=1)
    try:
        assert launcher.workers() >= 1
        code = "import os, pathlib; pathlib.Path('written').write_text(str(os.getpid()))"
        assert launcher([sys.executable, "-c", code]) == 0
        assert int((tmp_path / "written").read_text()) > 0
        assert launcher([sys.executable, "-c", "raise SystemExit(3)"]) == 3
    finally:
        launcher.close()
