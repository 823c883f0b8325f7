"""A real Ray cluster for the tests: a head on 127.0.0.1 with 2 CPUs, started once per session.

`ray start --head --block` runs in a session of its own (niced: the machine is shared), on
free ports and in a private temp dir, so it neither meets nor stops any other cluster on the
machine. A head whose start fails (Ray's fixed 30 s for its raylet, on a busy machine) is
started again. Teardown stops it however the tests ended: SIGTERM to the head (Ray stops what
it started), then SIGKILL to anything left in its session.

The head uses token authentication (Ray 2.60's mode wherever `~/.ray/auth_token` exists) with
a token of its own, which this process gets through `RAY_AUTH_MODE` and `RAY_AUTH_TOKEN` for
the session: the tests neither depend on nor touch the machine's token. Its agents get fixed
ports: with port 0 the raylet waits for their port files and, on a busy machine, gives up
before they are written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.rl.conftest import smollm2_tokenizer, tiny_model_dir  # noqa: F401

ray = pytest.importorskip("ray")
from ray._private.authentication_test_utils import reset_auth_token_state  # noqa: E402

CPUS = 2
REPO = Path(__file__).resolve().parents[2]
RAY = REPO / ".venv" / "bin" / "ray"
STARTED = b"Ray runtime started."
"""What `ray start` logs once the head's processes are all up."""
START_ATTEMPTS = 3


@dataclass(frozen=True)
class RayHead:
    address: str
    temp_dir: Path
    pid: int
    token: str

    def processes(self) -> list[int]:
        """Every process of this cluster (they all share the head's session)."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if os.getsid(int(entry.name)) == self.pid:
                        found.append(int(entry.name))
                except OSError:
                    continue
        return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_head(temp_dir: Path, log: Path, port: int, token: str) -> subprocess.Popen[bytes]:
    command = [
        "nice", "-n", "15", str(RAY if RAY.exists() else shutil.which("ray")), "start", "--head",
        "--block", "--node-ip-address", "127.0.0.1", "--port", str(port),
        "--num-cpus", str(CPUS), "--num-gpus", "0", "--object-store-memory", str(200 << 20),
        "--include-dashboard", "false", "--include-log-monitor", "false", "--disable-usage-stats",
        "--ray-client-server-port", str(free_port()), "--dashboard-port", str(free_port()),
        "--dashboard-agent-listen-port", str(free_port()),
        "--dashboard-agent-grpc-port", str(free_port()), "--runtime-env-agent-port",
        str(free_port()), "--metrics-export-port", str(free_port()), "--temp-dir", str(temp_dir),
    ]  # fmt: skip
    env = os.environ | {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}
    with log.open("wb") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)  # fmt: skip


def started(head: subprocess.Popen[bytes], log: Path, timeout: float = 600) -> bool:
    """Whether `ray start` finished starting the head (True) or exited first (False)."""
    # A bound, not the expected time (seconds on an idle machine): a niced head on a machine
    # whose cores are busy with other work can take minutes to come up.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if STARTED in log.read_bytes():
            return True
        if head.poll() is not None:
            return False
        time.sleep(0.3)
    pytest.fail(f"the Ray head did not start within {timeout} s: {log.read_text()[-2000:]}")


def stop(head: subprocess.Popen[bytes], cluster: RayHead) -> None:
    if ray.is_initialized():
        ray.shutdown()
    head.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        head.wait(30)
    for pid in cluster.processes():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


def launch(token: str) -> tuple[subprocess.Popen[bytes], RayHead]:
    """A started head. `ray start` gives its raylet a fixed 30 s to register, which a machine
    whose cores are taken can miss; such a head exits, and is started again on fresh ports."""
    for _ in range(START_ATTEMPTS):
        # A short path: Ray's unix sockets live under it (108-byte limit).
        temp_dir = Path(tempfile.mkdtemp(prefix="spade-ray-", dir="/tmp"))
        log, port = temp_dir / "head.log", free_port()
        head = start_head(temp_dir, log, port, token)
        cluster = RayHead(f"127.0.0.1:{port}", temp_dir, head.pid, token)
        try:
            if started(head, log):
                return head, cluster
        except BaseException:
            stop(head, cluster)
            raise
        failure = log.read_text()[-2000:]
        stop(head, cluster)
        shutil.rmtree(temp_dir, ignore_errors=True)
    pytest.fail(f"ray start failed {START_ATTEMPTS} times; the last said: {failure}")


@pytest.fixture(scope="session")
def ray_head() -> Iterator[RayHead]:
    token = secrets.token_hex(32)
    try:
        with pytest.MonkeyPatch.context() as env:
            env.setenv("RAY_AUTH_MODE", "token")
            env.setenv("RAY_AUTH_TOKEN", token)
            reset_auth_token_state()  # Ray read the variables once, when it was imported
            head, cluster = launch(token)
            try:
                yield cluster
            finally:
                stop(head, cluster)
                shutil.rmtree(cluster.temp_dir, ignore_errors=True)
    finally:
        reset_auth_token_state()  # the variables as they were


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A completion cache of this test's own (the workers inherit SPADE_CACHE_DIR)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SPADE_CACHE_DIR", str(cache))
    return cache
