"""A suite frozen once per session from the sources in suite_sources.py (real sandbox)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from spade.suites import FreezeOptions, FreezeReport, freeze_suite
from tests.suites.suite_sources import CREATED, SUITE, VERSION, write_sources


@pytest.fixture(scope="session")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> FreezeReport:
    """demo@1.2.0, frozen once per session from the sources in suite_sources.py."""
    base = tmp_path_factory.mktemp("frozen")
    sources = write_sources(base / "sources")
    options = FreezeOptions(eval_seeds=4, created=CREATED, description="test suite")
    return freeze_suite([sources], SUITE, VERSION, root=base / "root", options=options)


@pytest.fixture
def suite_copy(frozen: FreezeReport, tmp_path: Path) -> Path:
    """A private copy of the frozen suite folder, safe to tamper with."""
    target = tmp_path / "root" / SUITE / VERSION
    shutil.copytree(frozen.path, target)
    return target
