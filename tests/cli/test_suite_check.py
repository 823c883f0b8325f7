"""`spade-suite check` as a user runs it: exit codes, JSON contract, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.envs.sources import BROKEN, GOOD_TEXT, GOOD_TOOL

CONTRACT_KEYS = {"valid", "class_name", "checks", "reference_return", "seconds"}


def check(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "spade.cli.suite", "check", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def write(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / name
    path.write_text(source)
    return str(path)


@pytest.mark.parametrize("source", [GOOD_TEXT, GOOD_TOOL], ids=["text", "tool_use"])
def test_valid_env_exits_0_with_contract_json(tmp_path: Path, source: str) -> None:
    result = check(write(tmp_path, "env.py", source), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report.keys() >= CONTRACT_KEYS
    assert report["valid"] is True and report["reference_return"] == 1.0
    assert all(set(c) == {"name", "passed", "detail"} for c in report["checks"])


def test_invalid_env_exits_1_and_names_the_check(tmp_path: Path) -> None:
    result = check(write(tmp_path, "env.py", BROKEN["solution_solves"]))
    assert result.returncode == 1
    assert "INVALID" in result.stdout and "solution_solves" in result.stdout


def test_syntax_error_is_reported_as_loads_failure(tmp_path: Path) -> None:
    result = check(write(tmp_path, "env.py", BROKEN["loads"]), "--json")
    assert result.returncode == 1
    first = json.loads(result.stdout)["checks"][0]
    assert first["name"] == "loads" and "SyntaxError" in first["detail"]


def test_missing_file_is_a_one_line_usage_error(tmp_path: Path) -> None:
    result = check(str(tmp_path / "nope.py"))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "no such file" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_seed_count_is_a_usage_error(tmp_path: Path) -> None:
    result = check(write(tmp_path, "env.py", GOOD_TEXT), "--seeds", "0")
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_hanging_env_returns_within_its_time_limit(tmp_path: Path) -> None:
    hang = GOOD_TEXT.replace("self.turns = 0", "while True:\n            pass")
    started = time.monotonic()
    result = check(write(tmp_path, "env.py", hang), "--timeout", "1", "--json")
    assert result.returncode == 1
    assert time.monotonic() - started < 15
    failed = [c for c in json.loads(result.stdout)["checks"] if not c["passed"]]
    assert failed[0]["name"] == "reset_returns_text" and "limit" in failed[0]["detail"]
