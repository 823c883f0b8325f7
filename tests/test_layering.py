"""The layering is enforced: `lint-imports` keeps the contracts in pyproject.toml, and fails
when an import runs against them (planted in a copy of the package)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(package_parent: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run([str(LINT), str(ROOT / "pyproject.toml")], cwd=package_parent,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip


def test_the_package_keeps_its_contracts(tmp_path: Path) -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "2 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "planted", "broken"),
    [
        ("evals/stats.py", "import spade.selfplay.rewards", "spade.evals.stats -> spade.selfplay"),
        (
            "selfplay/rewards.py",
            "import spade.evals.stats",
            "spade.selfplay.rewards -> spade.evals",
        ),
        ("rollout/requests.py", "import spade.cli.errors", "spade.rollout.requests -> spade.cli"),
        ("sandbox/config.py", "import spade.envs.remote", "spade.sandbox.config -> spade.envs"),
    ],
)
def test_a_planted_upward_import_fails_the_lint(
    tmp_path: Path, module: str, planted: str, broken: str
) -> None:
    copy = tmp_path / "spade"
    shutil.copytree(ROOT / "spade", copy, ignore=shutil.ignore_patterns("__pycache__", "_data"))
    target = copy / module
    target.write_text(target.read_text() + f"\n{planted}  # planted by the test\n")
    result = lint(tmp_path)
    assert result.returncode == 1, result.stdout[-2000:]
    assert "0 broken" not in result.stdout and broken in result.stdout
