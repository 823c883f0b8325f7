"""Whole programs in the sandbox (`spade.sandbox.programs`): verdicts, fake passes, isolation
between programs, and hostile programs, against the real bubblewrap and unsafe-process backends."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from spade.sandbox import SandboxConfig
from spade.sandbox.process import bwrap_works
from spade.sandbox.programs import ProgramRunner, run_program, run_programs
from tests.sandbox.backends import sandbox_backends

BACKENDS = sandbox_backends(None)
TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"


@pytest.fixture(params=BACKENDS)
def config(request: pytest.FixtureRequest) -> SandboxConfig:
    return SandboxConfig(backend=request.param, memory_mb=512, max_processes=16)


@pytest.fixture
def runner(config: SandboxConfig):  # type: ignore[no-untyped-def]
    with ProgramRunner(config) as runner:
        yield runner


def test_a_correct_program_passes(runner: ProgramRunner) -> None:
    result = runner.run("def add(a, b):\n    return a + b\n" + TESTS, timeout_s=5)
    assert result.passed and result.status == "passed" and result.detail == ""
    assert 0 < result.seconds < 5


@pytest.mark.parametrize(
    ("solution", "expected"),
    [
        ("def add(a, b):\n    return a - b\n", "AssertionError"),
        ("def add(a, b)\n    return a + b\n", "SyntaxError"),
        ("def add(a, b):\n    return undefined_name\n", "NameError"),
        ("", "NameError"),
    ],
    ids=["wrong-value", "syntax-error", "name-error", "no-function"],
)
def test_a_wrong_program_fails_and_says_why(
    runner: ProgramRunner, solution: str, expected: str
) -> None:
    result = runner.run(solution + TESTS, timeout_s=5)
    assert not result.passed and result.status == "failed"
    assert expected in result.detail


# Ways a program could try to look successful without running its tests.
EARLY_EXITS = {
    "sys.exit(0)": "import sys\nsys.exit(0)\n",
    "exit(0)": "exit(0)\n",
    "quit()": "quit()\n",
    "raise SystemExit": "raise SystemExit(0)\n",
    "os._exit(0)": "import os\nos._exit(0)\n",
    "thread os._exit(0)": "import os, threading, time\n"
    "threading.Thread(target=lambda: os._exit(0)).start()\ntime.sleep(5)\n",
    "kill self": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
    "close every fd": "import os\nos.closerange(0, 1024)\n",
    "write to every fd": "import os\nfor fd in range(3, 64):\n    try:\n"
    "        os.write(fd, b'P')\n    except OSError:\n        pass\nos._exit(0)\n",
}


@pytest.mark.parametrize("exit_code", list(EARLY_EXITS.values()), ids=list(EARLY_EXITS))
def test_exiting_before_the_tests_is_not_a_pass(runner: ProgramRunner, exit_code: str) -> None:
    # The function is wrong: only a faked exit path could make this program "pass".
    program = "def add(a, b):\n    return 0\n" + exit_code + TESTS
    result = runner.run(program, timeout_s=5)
    assert not result.passed, result
    assert result.status in ("failed", "crashed")


def test_exit_inside_the_tested_function_is_not_a_pass(runner: ProgramRunner) -> None:
    for body in ("import sys; sys.exit(0)", "import os; os._exit(0)"):
        result = runner.run(f"def add(a, b):\n    {body}\n" + TESTS, timeout_s=5)
        assert not result.passed, (body, result)


def test_infinite_loop_and_sleep_time_out(runner: ProgramRunner) -> None:
    for program in ("while True:\n    pass\n", "import time\ntime.sleep(60)\n"):
        started = time.monotonic()
        result = runner.run(program, timeout_s=1.0)
        assert result.status == "timeout" and not result.passed
        assert time.monotonic() - started < 5
    assert runner.run("assert True", timeout_s=5).passed  # the runner recovers


def test_each_program_starts_from_a_clean_interpreter(runner: ProgramRunner) -> None:
    polluter = (
        "import builtins, threading, time, sys\n"
        "threading.Thread(target=time.sleep, args=(60,)).start()\n"
        "open('left_behind.txt', 'w').write('x')\n"
        "sys.modules['json'] = None\n"
        "builtins.len = lambda x: 0  # last: threading itself needs len\n"
    )
    started = time.monotonic()
    assert runner.run(polluter, timeout_s=5).passed  # a leftover thread does not block it
    assert time.monotonic() - started < 5
    checker = (
        "import os, json, threading\n"
        "assert len([1, 2]) == 2\n"
        "assert not os.path.exists('left_behind.txt')\n"
        "assert threading.active_count() == 1\n"
    )
    assert runner.run(checker, timeout_s=5).passed


def test_output_goes_nowhere(runner: ProgramRunner) -> None:
    program = "import sys\nprint('x' * 10_000_000)\nsys.stderr.write('y' * 10_000_000)\n"
    result = runner.run(program, timeout_s=10)
    assert result.passed, result


def test_the_host_environment_is_not_visible(
    runner: ProgramRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPADE_TEST_SECRET", "hunter2")
    program = "import os\nassert 'SPADE_TEST_SECRET' not in os.environ, dict(os.environ)\n"
    assert runner.run(program, timeout_s=5).passed


@pytest.mark.skipif(not bwrap_works(), reason="no bubblewrap")
def test_host_files_are_not_visible_under_bwrap(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2")
    program = (
        "import os\n"
        "assert not os.path.exists('/etc/passwd')\n"
        f"assert not os.path.exists({str(secret)!r})\n"
    )
    assert run_program(program, 5, SandboxConfig(backend="bwrap")).passed


def test_fork_bomb_is_contained(runner: ProgramRunner) -> None:
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    started = time.monotonic()
    result = runner.run(bomb, timeout_s=2)
    assert not result.passed
    assert time.monotonic() - started < 20
    assert os.system("true") == 0  # the host can still fork
    assert runner.run("assert 1 + 1 == 2", timeout_s=5).passed


def test_memory_bomb_fails_and_the_runner_recovers(runner: ProgramRunner) -> None:
    bomb = "blocks = []\nwhile True:\n    blocks.append(bytearray(64 << 20))\n"
    result = runner.run(bomb, timeout_s=10)
    assert not result.passed and result.status in ("failed", "crashed")
    assert runner.run("assert 1 + 1 == 2", timeout_s=5).passed


def test_processes_escaping_their_group_do_not_survive_the_program(config: SandboxConfig) -> None:
    escape = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(600)\n"
    # In the sandbox's pid namespace a program sees every process of its sandbox (bwrap's
    # init or none, the worker and itself), and nothing left over from earlier programs.
    census = (
        "import os\n"
        "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
        "assert len(pids) <= 3, pids\n"
    )
    with ProgramRunner(config) as runner:
        assert runner.run(escape, timeout_s=5).passed
        assert runner.run(census, timeout_s=5).passed


def test_run_programs_keeps_input_order_and_reports_progress() -> None:
    programs = [f"assert {i} % 3 != 0" for i in range(12)]
    finished: list[int] = []
    results = run_programs(programs, timeout_s=5, parallelism=2, progress=finished.append)
    assert [r.passed for r in results] == [i % 3 != 0 for i in range(12)]
    assert sorted(finished) == list(range(12))


def test_run_programs_isolates_a_hanging_program_from_the_rest() -> None:
    programs = ["while True:\n    pass\n"] + ["assert True"] * 6
    results = run_programs(programs, timeout_s=1, parallelism=2)
    assert [r.status for r in results] == ["timeout"] + ["passed"] * 6
