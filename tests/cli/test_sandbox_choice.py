"""The sandbox choice of every command that runs generated code, as a user meets it.

"A machine without bubblewrap and docker" is simulated for real: the commands run with a
PATH in which no `bwrap` exists and DOCKER_HOST naming a socket that does not exist. There,
`auto` must stop with one line and exit 2 before any env code runs; the explicit
`unsafe-process` opt-in must run it contained (these tests run as root in CI, where the
backend drops to uid 65534 in fresh namespaces) and say so in what it records.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from spade.sandbox.unsafe_process import confinement
from tests.envs.sources import GOOD_TEXT

ROOT = Path(__file__).resolve().parents[2]
NO_ENGINE = "unix:///nonexistent/docker.sock"
NO_SANDBOX = (
    "no sandbox for untrusted code: bubblewrap is not installed (apt-get install bubblewrap) "
    f"and no Docker engine answers at {NO_ENGINE} (no socket there; apt-get install docker.io "
    "and start it, or set DOCKER_HOST); to run env code without isolation anyway, opt in with "
    "--sandbox unsafe-process (spade-train: sandbox.backend: unsafe-process)"
)


def bare_machine(tmp_path: Path) -> dict[str, str]:
    """The environment of a machine with neither bubblewrap nor a Docker engine."""
    empty = tmp_path / "bin"
    empty.mkdir(exist_ok=True)
    return {"PATH": str(empty), "DOCKER_HOST": NO_ENGINE, "HOME": str(Path.home()),
            "LANG": "C.UTF-8", "SPADE_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip


def run(module: str, *args: str, env: dict[str, str], cwd: Path = ROOT, timeout: float = 600):
    # The timeout only ends a hung command: importing torch and vLLM can take minutes on a
    # machine whose cores are busy (120 s ran out here beside a training run).
    command = [sys.executable, "-m", module, *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)  # fmt: skip


def marking_env(marker: Path) -> str:
    """A valid env that leaves `marker` behind the moment any of its code runs."""
    return f"open({str(marker)!r}, 'w').write('ran')\n" + GOOD_TEXT


def assert_one_line(stderr: str, message: str) -> None:
    assert stderr.count("\n") == 1 and stderr.endswith("\n"), stderr
    assert "Traceback" not in stderr
    assert stderr.strip() == message, stderr


@pytest.mark.parametrize("flags", [[], ["--json"], ["--sandbox", "auto"]])
def test_check_without_bwrap_or_docker_exits_2_and_runs_nothing(
    tmp_path: Path, flags: list[str]
) -> None:
    marker = tmp_path / "marker"
    source = tmp_path / "env.py"
    source.write_text(marking_env(marker))
    result = run("spade.cli.suite", "check", str(source), *flags, env=bare_machine(tmp_path))
    assert result.returncode == 2, result.stderr
    assert_one_line(result.stderr, f"error: spade-suite: {NO_SANDBOX}")
    assert result.stdout == ""
    assert not marker.exists()


def test_freeze_without_a_sandbox_exits_2_and_writes_no_suite(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    source = tmp_path / "env.py"
    source.write_text(marking_env(marker))
    root = tmp_path / "suites"
    result = run("spade.cli.suite", "freeze", str(source), "--name", "x", "--version", "1.0.0",
                 "--root", str(root), env=bare_machine(tmp_path))  # fmt: skip
    assert result.returncode == 2
    assert_one_line(result.stderr, f"error: spade-suite: {NO_SANDBOX}")
    assert not marker.exists() and not (root / "x").exists()


def test_bwrap_requested_where_it_is_missing_is_one_line(tmp_path: Path) -> None:
    source = tmp_path / "env.py"
    source.write_text(GOOD_TEXT)
    result = run("spade.cli.suite", "check", str(source), "--backend", "bwrap",
                 env=bare_machine(tmp_path))  # fmt: skip
    assert result.returncode == 2
    assert_one_line(
        result.stderr,
        "error: spade-suite: sandbox backend 'bwrap' requested, but bubblewrap is not "
        "installed (apt-get install bubblewrap)",
    )


def test_unsafe_opt_in_checks_a_valid_env_and_records_it(tmp_path: Path) -> None:
    source = tmp_path / "env.py"
    source.write_text(GOOD_TEXT)
    result = run("spade.cli.suite", "check", str(source), "--sandbox", "unsafe-process",
                 "--json", env=bare_machine(tmp_path))  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["valid"] is True
    assert report["sandbox"]["backend"] == "unsafe-process" and report["sandbox"]["unsafe"]
    assert "warning: spade-suite: sandbox backend unsafe-process" in result.stderr


# Runs when the module loads; what it managed ends up in the env's metadata, which
# `check --json` prints. It SIGKILLs only the disposable victim and processes whose command
# line carries TOKEN (the checker: TOKEN is in its env file's name); the test process only
# gets signal 0, a permission check, so a broken sandbox fails the test instead of ending it.
HOSTILE = """
import os, signal

TOKEN = {token!r}
found = {{}}
for path in {targets!r}:
    try:
        with open(path, "w") as handle:
            handle.write("pwned")
        found[path] = "WRITTEN"
    except OSError as exc:
        found[path] = type(exc).__name__
try:
    found["shadow"] = "READ " + open("/etc/shadow").read(100)
except OSError as exc:
    found["shadow"] = type(exc).__name__
found["environ"] = repr(dict(os.environ))
signalled = []
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    try:
        with open(f"/proc/{{pid}}/cmdline", "rb") as handle:
            checker = TOKEN.encode() in handle.read()
        if checker and pid != os.getpid():
            os.kill(pid, signal.SIGKILL)
            signalled.append(pid)
    except OSError:
        pass
for pid, sig in (({victim}, signal.SIGKILL), ({test}, 0)):
    try:
        os.kill(pid, sig)
        signalled.append(pid)
    except OSError:
        pass
found["signalled"] = signalled
"""


def test_unsafe_opt_in_contains_a_hostile_env(tmp_path: Path) -> None:
    if not confinement().namespaces:
        pytest.skip("this host refuses user namespaces: unsafe-process cannot confine here")
    token = uuid.uuid4().hex
    work = tmp_path / "work"  # the checker's working directory, writable by anyone
    work.mkdir()
    work.chmod(0o777)
    targets = [f"/tmp/{token}", str(Path.home() / token), str(work / token), f"/dev/shm/{token}"]
    victim = subprocess.Popen(["sleep", "300"], start_new_session=True)
    source = work / f"env_{token}.py"
    hostile = HOSTILE.format(token=token, targets=targets, victim=victim.pid, test=os.getpid())
    trailer = "\nLockEnv.metadata = {**LockEnv.metadata, 'found': found}\n"
    source.write_text(hostile + GOOD_TEXT + trailer)
    machine = bare_machine(tmp_path) | {"SPADE_TEST_SECRET": "hunter2"}
    try:
        result = run("spade.cli.suite", "check", str(source), "--sandbox", "unsafe-process",
                     "--json", env=machine, cwd=work)  # fmt: skip
        time.sleep(0.2)
        victim_alive = victim.poll() is None
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        written = [path for path in targets if Path(path).exists()]
        for path in written:
            Path(path).unlink()
    assert result.returncode == 0, result.stderr  # the checker survived, the env is valid
    report = json.loads(result.stdout)
    found = report["metadata"]["found"]
    assert written == [] and all(found[path] != "WRITTEN" for path in targets), found
    assert found["shadow"] in ("PermissionError", "FileNotFoundError"), found
    assert "hunter2" not in found["environ"] and "SPADE_TEST_SECRET" not in found["environ"]
    assert found["signalled"] == [] and victim_alive, found
    assert report["sandbox"]["unsafe"] is True


def test_spade_eval_without_a_sandbox_exits_2_on_a_suite_benchmark(tmp_path: Path) -> None:
    predictions = tmp_path / "predictions.jsonl"
    line = {"benchmark": "suite:spade-seed@1.0.0", "id": "spade-seed/BattleshipEnv-v1/1046350156",
            "output": []}  # fmt: skip
    predictions.write_text(json.dumps(line) + "\n")
    out = tmp_path / "out"
    result = run("spade.cli.eval", "--predictions", str(predictions), "--output", str(out),
                 env=bare_machine(tmp_path))  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"error: spade-eval: {NO_SANDBOX}"
    assert "Traceback" not in result.stderr
    assert not (out / "results.json").exists()


def test_spade_eval_records_the_unsafe_opt_in_in_results(tmp_path: Path) -> None:
    predictions = tmp_path / "predictions.jsonl"
    line = {"benchmark": "suite:spade-seed@1.0.0", "id": "spade-seed/BattleshipEnv-v1/1046350156",
            "output": []}  # fmt: skip
    predictions.write_text(json.dumps(line) + "\n")
    out = tmp_path / "out"
    result = run("spade.cli.eval", "--predictions", str(predictions), "--output", str(out),
                 "--sandbox", "unsafe-process", env=bare_machine(tmp_path))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "warning: spade-eval: sandbox backend unsafe-process" in result.stderr
    sandbox = json.loads((out / "results.json").read_text())["settings"]["sandbox"]
    assert sandbox["backend"] == "unsafe-process" and sandbox["unsafe"] is True


def test_spade_train_without_a_sandbox_exits_2_before_loading_anything(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    # A model that does not exist: had the run tried to load it, the error would name it.
    missing = tmp_path / "no-such-model"
    result = run("spade.cli.train", "--run-dir", str(run_dir), "--iterations", "1",
                 "--set", f"model={missing}", env=bare_machine(tmp_path))  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert_one_line(result.stderr, f"error: spade-train: {NO_SANDBOX}")
    assert str(missing) not in result.stderr
    assert not run_dir.exists()


def test_spade_train_sandbox_section_is_typed(tmp_path: Path) -> None:
    result = run("spade.cli.train", "--run-dir", str(tmp_path / "run"),
                 "--set", "sandbox.backend=process", env=bare_machine(tmp_path))  # fmt: skip
    assert result.returncode == 2
    assert "sandbox.backend" in result.stderr and "unsafe-process" in result.stderr
    assert "Traceback" not in result.stderr


def test_freeze_records_the_backend_in_the_manifest(tmp_path: Path) -> None:
    source = tmp_path / "env.py"
    source.write_text(GOOD_TEXT)
    root = tmp_path / "suites"
    result = run("spade.cli.suite", "freeze", str(source), "--name", "t", "--version", "1.0.0",
                 "--root", str(root), "--sandbox", "unsafe-process", "--seeds", "2",
                 "--eval-seeds", "2", env=bare_machine(tmp_path))  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = json.loads((root / "t" / "1.0.0" / "manifest.json").read_text())
    assert manifest["sandbox"]["requested"] == "unsafe-process"
    assert manifest["sandbox"]["backend"] == "unsafe-process"
    assert manifest["sandbox"]["unsafe"] is True
    verify = run("spade.cli.suite", "verify", "t@1.0.0", "--root", str(root), "--no-recheck",
                 env=bare_machine(tmp_path))  # fmt: skip
    assert verify.returncode == 0, verify.stderr  # the field meets the manifest schema
