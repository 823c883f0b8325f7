"""Hostile env programs against every real sandbox backend: bubblewrap, unsafe-process (the
explicit opt-in) and docker (an engine is started for the session where none answers).

Each program must end as an error or a contained run; the test process must stay healthy
and no worker process may outlive its sandbox. As root (as CI runs them) nothing here skips
for unsafe-process: it must drop to uid 65534 in fresh namespaces.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from spade.envs import RemoteEnv, validate_source
from spade.sandbox import (
    EnvCallError,
    SandboxConfig,
    SandboxCrash,
    SandboxError,
    SandboxOutputLimit,
    SandboxTimeout,
    resolve_backend,
)
from tests.sandbox.backends import sandbox_backends

BACKENDS = sandbox_backends(120)


def env_source(reset_body: str, step_body: str = "return 'ok', 0.0, False, False, {}") -> str:
    """A minimal env whose reset/step run the given (hostile) code."""
    indent = "\n        "
    return f"""
import os, sys, socket, signal, threading, ctypes, time

class HostileEnv:
    max_turns = 3
    def reset(self, seed=None):
        {indent.join(reset_body.strip().splitlines())}
    def step(self, action):
        {indent.join(step_body.strip().splitlines())}
    def solution(self):
        return ["a", "b"]
    def close(self):
        pass
"""


@pytest.fixture(params=BACKENDS)
def config(request: pytest.FixtureRequest) -> SandboxConfig:
    url = request.getfixturevalue("docker_url") if request.param == "docker" else None
    return SandboxConfig(backend=request.param, call_timeout_s=1.5, load_timeout_s=5.0,
                         memory_mb=512, max_processes=16, docker_url=url)  # fmt: skip


def require_layer(config: SandboxConfig, layer: str) -> None:
    """Skip where the backend itself reports this protection as missing on this host."""
    isolation = resolve_backend(config).isolation()
    if not isolation.get(layer):
        pytest.skip(f"{config.backend} backend reports no {layer} on this host: {isolation}")


def run_reset(source: str, config: SandboxConfig) -> tuple[str, dict]:
    with RemoteEnv(source, config=config) as env:
        return env.reset(0)


def assert_host_healthy(started: float, budget: float) -> None:
    assert time.monotonic() - started < budget
    # The test process can still fork and allocate.
    assert os.system("true") == 0
    _ = bytearray(50 << 20)


def test_infinite_loop_in_reset_times_out_and_worker_is_replaced(config: SandboxConfig) -> None:
    started = time.monotonic()
    env = RemoteEnv(env_source("while True: pass"), config=config)
    with pytest.raises(SandboxTimeout):
        env.reset(0)
    assert not env.worker.alive
    with pytest.raises(SandboxTimeout):  # a fresh worker, same hostile code
        env.reset(0)
    env.close()
    assert_host_healthy(started, 10)


def test_infinite_loop_in_step(config: SandboxConfig) -> None:
    source = env_source("return 'hi', {}", "while True: pass")
    with RemoteEnv(source, config=config) as env:
        env.reset(0)
        with pytest.raises(SandboxTimeout):
            env.step("x")
        assert env.reset(1)[0] == "hi"  # kill-and-replace: the next episode works


def test_hang_at_import_is_a_load_timeout(config: SandboxConfig) -> None:
    source = "import time\nwhile True:\n    time.sleep(1)\n" + env_source("return 'x', {}")
    report = validate_source(source, config=config)
    assert not report.valid and report.checks[0].name == "loads"
    assert "limit" in report.checks[0].detail


def test_fork_bomb_is_contained(config: SandboxConfig) -> None:
    started = time.monotonic()
    bomb = "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    with pytest.raises(SandboxError):
        run_reset(env_source(bomb), config)
    assert_host_healthy(started, 20)


def test_memory_bomb_is_contained(config: SandboxConfig) -> None:
    bomb = "blocks = []\nwhile True:\n    blocks.append(bytearray(64 << 20))"
    roomy = replace(config, call_timeout_s=15.0)  # the limit, not the clock, must stop it
    with pytest.raises((EnvCallError, SandboxCrash)) as info:
        run_reset(env_source(bomb), roomy)
    if isinstance(info.value, EnvCallError):
        assert "MemoryError" in str(info.value)


def test_network_is_unreachable(config: SandboxConfig) -> None:
    require_layer(config, "network_namespace")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.5)
    port = server.getsockname()[1]
    connect = f"""
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=1)
    return "connected", {{}}
except OSError as exc:
    return "blocked: " + type(exc).__name__, {{}}"""
    observation, _ = run_reset(env_source(connect), config)
    assert observation.startswith("blocked"), observation
    with pytest.raises(TimeoutError):
        server.accept()
    server.close()


def host_targets(tmp_path: Path) -> list[Path]:
    """Host paths a hostile env tries to create: in /tmp, the home dir, the working dir, a
    world-writable test folder, /dev/shm, /usr and /."""
    tag = f"spade-pwned-{uuid.uuid4().hex[:8]}"
    tmp_path.chmod(0o777)  # even a world-writable host dir must stay out of reach
    folders = ["/tmp", Path.home(), Path.cwd(), tmp_path, "/dev/shm", "/usr", "/"]
    return [Path(folder) / tag for folder in folders]


def test_cannot_write_to_tmp_home_cwd_or_anywhere_but_scratch(
    config: SandboxConfig, tmp_path: Path
) -> None:
    require_layer(config, "mount_namespace")
    targets = host_targets(tmp_path)
    write = f"""
results = []
for path in {[str(t) for t in targets]!r} + ["scratch_ok.txt"]:
    try:
        with open(path, "w") as handle:
            handle.write("x")
        results.append(path + ":written")
    except OSError as exc:
        results.append(path + ":" + type(exc).__name__)
return ";".join(results), {{}}"""
    try:
        observation, _ = run_reset(env_source(write), config)
        # Backends with a private /tmp or /dev/shm may let the write succeed in there; what
        # counts is that nothing appeared on the host.
        assert [t for t in targets if t.exists()] == [], observation
    finally:
        for target in targets:
            target.unlink(missing_ok=True)
    assert "scratch_ok.txt:written" in observation.split(";"), observation


def test_no_host_secrets(config: SandboxConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPADE_TEST_SECRET", "hunter2")
    require_layer(config, "unprivileged_uid")
    snoop = """
found = [repr(dict(os.environ))]
for path in ["/etc/shadow", "/proc/1/environ", "/root/.bash_history"]:
    try:
        found.append(open(path, "rb").read(4000).decode("latin-1"))
    except OSError as exc:
        found.append(path + ":" + type(exc).__name__)
return "\\n".join(found), {}"""
    observation, _ = run_reset(env_source(snoop), config)
    assert "hunter2" not in observation and "SPADE_TEST_SECRET" not in observation
    for path in ("/etc/shadow", "/root/.bash_history"):
        assert f"{path}:" in observation, observation  # reading it failed


def test_host_environment_variables_are_not_visible(
    config: SandboxConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPADE_TEST_TOKEN", "s3cr3t-token")
    names = "return repr(sorted(os.environ)) + repr(list(os.environ.values())), {}"
    observation, _ = run_reset(env_source(names), config)
    assert "SPADE_TEST_TOKEN" not in observation and "s3cr3t-token" not in observation
    assert "HOME=/root" not in observation and "/root" not in observation


def test_cannot_read_etc_shadow(config: SandboxConfig) -> None:
    read = """
try:
    return "READ " + open("/etc/shadow").read(200), {}
except OSError as exc:
    return "refused: " + type(exc).__name__, {}"""
    observation, _ = run_reset(env_source(read), config)
    assert observation.startswith("refused"), observation


def test_cannot_signal_host_processes(config: SandboxConfig) -> None:
    require_layer(config, "pid_namespace")
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)  # its own group
    try:
        # SIGKILL only at the disposable sleeper; the test process itself gets signal 0
        # (a permission check), so a failure here cannot take pytest down with it.
        # Host pid 1 is left out: in the sandbox's pid namespace 1 is its own init, so a
        # pytest whose parent is init (started with nohup) would "signal" it there.
        targets = [(victim.pid, signal.SIGKILL), (os.getpid(), 0), (os.getppid(), 0)]
        targets = [(pid, int(sig)) for pid, sig in targets if pid != 1]
        attack = f"""
out = []
for pid, sig in {targets!r}:
    try:
        os.kill(pid, sig)
        out.append(f"{{pid}}:SIGNALLED")
    except OSError as exc:
        out.append(f"{{pid}}:{{type(exc).__name__}}")
try:
    os.killpg({os.getpgid(victim.pid)}, signal.SIGKILL)
    out.append("group:SIGNALLED")
except OSError as exc:
    out.append("group:" + type(exc).__name__)
return ";".join(out), {{}}"""
        observation, _ = run_reset(env_source(attack), config)
        assert "SIGNALLED" not in observation, observation
        time.sleep(0.2)
        assert victim.poll() is None, "the host process was killed"
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()


def test_segfault_via_ctypes_is_a_crash(config: SandboxConfig) -> None:
    with pytest.raises(SandboxCrash) as info:
        run_reset(env_source("ctypes.string_at(0)"), config)
    # The crash report says how it died (bwrap passes the signal on as status 128 + 11).
    assert "SIGSEGV" in str(info.value) or "status 139" in str(info.value), info.value


def test_signal_tricks_do_not_save_a_hung_env(config: SandboxConfig) -> None:
    trick = """
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
    signal.signal(sig, signal.SIG_IGN)
while True:
    pass"""
    with pytest.raises(SandboxTimeout):
        run_reset(env_source(trick), config)


def test_exit_calls_are_errors_not_host_exits(config: SandboxConfig) -> None:
    with pytest.raises(EnvCallError, match="SystemExit"):
        run_reset(env_source("sys.exit(3)"), config)
    with pytest.raises(SandboxCrash):
        run_reset(env_source("os._exit(0)"), config)


def test_thread_that_never_ends_is_killed_with_the_worker(config: SandboxConfig) -> None:
    spin = """
threading.Thread(target=lambda: [None for _ in iter(int, 1)]).start()
return "started", {}"""
    env = RemoteEnv(env_source(spin), config=config)
    assert env.reset(0)[0] == "started"
    started = time.monotonic()
    env.close()
    assert time.monotonic() - started < 5
    assert threading.active_count() < 50


def test_huge_output_is_capped(config: SandboxConfig) -> None:
    flood = "print('x' * (50 << 20))\nreturn 'y' * (100 << 20), {}"
    roomy = replace(config, call_timeout_s=15.0)  # the cap, not the clock, must stop it
    with pytest.raises((EnvCallError, SandboxOutputLimit, SandboxCrash)) as info:
        run_reset(env_source(flood), roomy)
    if isinstance(info.value, EnvCallError):
        assert "output cap" in str(info.value) or "MemoryError" in str(info.value)


def test_validation_of_hostile_env_returns_within_its_limit(config: SandboxConfig) -> None:
    started = time.monotonic()
    report = validate_source(env_source("return 'ok', {}", "while True: pass"), config=config)
    assert not report.valid
    failed = report.failed()[0]
    assert "limit" in failed.detail
    assert all(c.detail.startswith("not run") for c in report.failed()[1:])
    assert time.monotonic() - started < 10
