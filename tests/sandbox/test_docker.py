"""The docker backend: a good env works, hostile ones are contained, the caller stays fine."""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import time
from typing import Any

import pytest

from spade.sandbox import (
    EnvCallError,
    SandboxConfig,
    SandboxCrash,
    SandboxOutputLimit,
    SandboxTimeout,
    SandboxUnavailable,
    SandboxWorker,
)

GOOD = """
class CountEnv:
    def reset(self, seed=None):
        self.n = 0
        return "count to three", {"seed": seed}

    def step(self, action):
        self.n += 1
        return f"heard {action}", min(1.0, self.n / 3), self.n >= 3, False, {}

    def solution(self):
        return ["one", "two", "three"]

    def close(self):
        pass
"""

# One env whose step() runs the program named by the action; each program is hostile.
HOSTILE = """
import os, socket, struct, time

def spin():
    while True:
        pass

def memory():
    hoard = []
    while True:
        hoard.append(b"x" * (8 << 20))  # touches every page, unlike bytearray(n)

def fork():
    n = 0
    try:
        while n < 10000:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            n += 1
    except OSError as exc:
        return f"forked {n}, then {type(exc).__name__} errno {exc.errno}"
    return f"forked {n}"

def fork_bomb():
    while True:
        try:
            os.fork()
        except OSError:
            pass

def network():
    results = [repr(socket.if_nameindex())]
    for host, port in (("1.1.1.1", 53), ("8.8.8.8", 443), ("172.17.0.1", 2375)):
        try:
            socket.create_connection((host, port), timeout=1).close()
            results.append(f"{host} CONNECTED")
        except OSError as exc:
            results.append(f"{host} {type(exc).__name__}")
    try:
        socket.getaddrinfo("pypi.org", 443)
        results.append("dns RESOLVED")
    except OSError as exc:
        results.append(f"dns {type(exc).__name__}")
    return "\\n".join(results)

def files():
    out = []
    for path in ("/etc/passwd", "/escape", "/usr/lib/escape", "/spade/worker.py",
                 "/dev/shm/escape", "/proc/sys/kernel/hostname", "/scratch/ok", "/tmp/ok"):
        try:
            with open(path, "a") as handle:
                handle.write("x")
            out.append(f"{path} WRITTEN")
        except OSError as exc:
            out.append(f"{path} {type(exc).__name__}")
    try:
        with open("/scratch/big", "wb") as handle:
            handle.write(b"x" * (2 << 20))  # over the 1 MB file-size limit
        out.append("big WRITTEN")
    except OSError as exc:
        out.append(f"big {type(exc).__name__}")
    for path in ("/etc/shadow", "/root", "/home", "/work", "/var/run/docker.sock"):
        out.append(f"{path} {'PRESENT' if os.path.exists(path) else 'absent'}")
    return "\\n".join(out)

def environment():
    return repr(sorted(os.environ.items()))

def resolv():
    with open("/etc/resolv.conf") as handle:
        return handle.read()

def flood():
    print("y" * 10_000_000)  # the env's own prints go to /dev/null
    return "x" * 100_000_000

def raw_flood():
    # Bypass the worker's output cap: write a giant frame straight to the protocol fd.
    os.write(4, struct.pack(">I", 100_000_000) + b"x" * 65536)
    return "unreachable"

class HostileEnv:
    def reset(self, seed=None):
        return "pick a program", {}

    def step(self, action):
        return globals()[action](), 0.0, False, False, {}

    def solution(self):
        return []

    def close(self):
        pass
"""


def _worker(config: SandboxConfig, backend: Any, source: str = HOSTILE) -> SandboxWorker:
    worker = SandboxWorker(config, backend)
    worker.call("load", source=source, filename="env.py")
    worker.call("new")
    worker.call("reset", seed=0)
    return worker


def _assert_recovers(worker: SandboxWorker) -> None:
    """After a failure the worker is gone; the next call starts a fresh, working one."""
    assert not worker.alive
    worker.call("load", source=GOOD)
    worker.call("new")
    worker.call("reset", seed=1)
    assert worker.call("step", action="one")["observation"] == "heard one"


def _container_exists(backend: Any, container_id: str) -> bool:
    return bool(backend.client.api.containers(all=True, filters={"id": container_id}))


def test_unreachable_engine_is_one_clear_line() -> None:
    pytest.importorskip("docker")
    from spade.sandbox.docker import DockerBackend

    config = SandboxConfig(backend="docker", docker_url="unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxUnavailable) as info:  # a setup problem, never an env verdict
        DockerBackend(config)
    message = str(info.value)
    assert "no Docker engine reachable at unix:///nonexistent/docker.sock" in message
    assert "\n" not in message


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_good_env_loads_resets_and_steps(docker_backend: Any, docker_config: SandboxConfig):
    isolation = docker_backend.isolation()
    assert isolation["backend"] == "docker" and isolation["network_namespace"]
    with SandboxWorker(docker_config, docker_backend) as worker:
        assert worker.call("ping") == {"pid": 1, "uid": 65534}
        assert worker.call("load", source=GOOD)["classes"] == ["CountEnv"]
        assert worker.call("new")["class_name"] == "CountEnv"
        reset = worker.call("reset", seed=7)
        assert reset == {"observation": "count to three", "info": {"seed": 7}, "max_turns": None}
        actions = worker.call("solution")["actions"]
        replies = [worker.call("step", action=a) for a in actions]
        assert replies[-1]["reward"] == 1.0 and replies[-1]["terminated"] is True
        transport = worker._transport
        assert transport is not None
    # close() removed the container.
    assert not _container_exists(docker_backend, transport.id)
    transport.kill()  # idempotent


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_image_is_reused_and_small(docker_backend: Any) -> None:
    from spade.sandbox.docker_image import RECIPE_LABEL, ensure_image, recipe

    assert ensure_image(docker_backend.client, docker_backend.image) == "reused"
    attrs = docker_backend.client.api.inspect_image(docker_backend.image)
    assert attrs["Config"]["Labels"][RECIPE_LABEL] == recipe().digest
    assert attrs["Size"] < 120 << 20


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_orphaned_containers_are_removed(docker_backend: Any) -> None:
    from spade.sandbox.docker import LABEL, OWNER_LABEL, _owner, _remove_orphans

    api = docker_backend.client.api
    ids = {}
    for who, owner in (("dead", f"{socket.gethostname()}/999999999/0"), ("alive", _owner())):
        config = api.create_container_config(
            docker_backend.image, ["/usr/bin/python3", "-c", "pass"],
            labels={LABEL: "worker", OWNER_LABEL: owner},
        )  # fmt: skip
        ids[who] = api.create_container_from_config(config)["Id"]
    try:
        _remove_orphans(docker_backend.client)
        assert not _container_exists(docker_backend, ids["dead"])
        assert _container_exists(docker_backend, ids["alive"])
    finally:
        for container_id in ids.values():
            with contextlib.suppress(Exception):
                api.remove_container(container_id, force=True)


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_infinite_loop_times_out_then_worker_restarts(docker_backend, docker_config):
    worker = _worker(docker_config, docker_backend)
    transport = worker._transport
    started = time.monotonic()
    with pytest.raises(SandboxTimeout):
        worker.call("step", action="spin")
    assert time.monotonic() - started < docker_config.call_timeout_s + 2.0
    assert not _container_exists(docker_backend, transport.id)
    _assert_recovers(worker)
    worker.close()


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_memory_bomb_is_oom_killed(docker_backend, docker_config):
    worker = _worker(docker_config, docker_backend)
    with pytest.raises(SandboxCrash, match="OOM killed"):
        worker.call("step", action="memory", timeout=20)
    _assert_recovers(worker)
    worker.close()


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_fork_stops_at_the_pids_limit(docker_backend, docker_config):
    with _worker(docker_config, docker_backend) as worker:
        observation = worker.call("step", action="fork")["observation"]
        forked = int(observation.split()[1].rstrip(","))
        assert forked < docker_config.max_processes, observation
        assert "errno 11" in observation  # EAGAIN from the pids cgroup
        assert worker.call("ping")["uid"] == 65534  # the worker itself is fine


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_fork_bomb_is_contained_and_removed(docker_backend, docker_config):
    worker = _worker(docker_config, docker_backend)
    transport = worker._transport
    with pytest.raises(SandboxTimeout):
        worker.call("step", action="fork_bomb")
    assert not _container_exists(docker_backend, transport.id)
    _assert_recovers(worker)
    worker.close()


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_network_is_unreachable(docker_backend, docker_config):
    with _worker(docker_config, docker_backend) as worker:
        lines = worker.call("step", action="network", timeout=20)["observation"].splitlines()
    assert lines[0] == "[(1, 'lo')]"
    assert not [line for line in lines if "CONNECTED" in line or "RESOLVED" in line], lines


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_writes_outside_scratch_fail(docker_backend, docker_config):
    with _worker(docker_config, docker_backend) as worker:
        report = worker.call("step", action="files")["observation"].splitlines()
    outcome = dict(line.rsplit(" ", 1) for line in report)
    for path in ("/etc/passwd", "/escape", "/usr/lib/escape", "/spade/worker.py",
                 "/dev/shm/escape", "/proc/sys/kernel/hostname"):  # fmt: skip
        assert outcome[path] != "WRITTEN", report
    assert outcome["/scratch/ok"] == "WRITTEN" and outcome["/tmp/ok"] == "WRITTEN"
    assert outcome["big"] != "WRITTEN"  # RLIMIT_FSIZE inside the scratch dir too
    for path in ("/etc/shadow", "/root", "/home", "/work", "/var/run/docker.sock"):
        assert outcome[path] == "absent", report


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_host_environment_is_absent(docker_backend, docker_config, monkeypatch):
    monkeypatch.setenv("SPADE_TEST_SECRET", "hunter2")
    with _worker(docker_config, docker_backend) as worker:
        seen = worker.call("step", action="environment")["observation"]
    assert "SPADE_TEST_SECRET" not in seen and "hunter2" not in seen
    names = {name for name, _ in eval(seen)}  # a repr of sorted (name, value) pairs
    assert names <= {"PATH", "HOSTNAME", "HOME"}, names


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_host_resolver_config_is_not_copied_in(docker_backend, docker_config):
    with _worker(docker_config, docker_backend) as worker:
        inside = worker.call("step", action="resolv")["observation"]
    assert "nameserver 127.0.0.1" in inside
    with contextlib.suppress(OSError), open("/etc/resolv.conf") as handle:
        for line in handle:
            if line.startswith(("nameserver", "search")) and "127.0.0.1" not in line:
                assert line.strip() not in inside, inside


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_huge_output_is_refused_and_caller_stays_healthy(docker_backend, docker_config):
    config = dataclasses.replace(docker_config, memory_mb=768)  # room to build 100 MB
    worker = _worker(config, docker_backend)
    with pytest.raises(EnvCallError) as info:
        worker.call("step", action="flood", timeout=30)
    assert info.value.kind == "contract" and "output cap" in str(info.value)
    assert worker.alive and worker.call("ping")["uid"] == 65534  # same worker, still fine
    # A frame written past the worker's cap is refused by the host reader.
    with pytest.raises(SandboxOutputLimit):
        worker.call("step", action="raw_flood")
    _assert_recovers(worker)
    worker.close()


@pytest.mark.docker
@pytest.mark.timeout(60)
def test_worker_exits_when_the_caller_goes_away(docker_backend, docker_config):
    worker = _worker(docker_config, docker_backend, source=GOOD)
    transport = worker._transport
    # What a crashed caller leaves behind: the attach connection closes, nothing is removed.
    transport._reader.sock.close()
    transport._socket_io.close()
    deadline = time.monotonic() + 10
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        state = docker_backend.client.api.inspect_container(transport.id)["State"]
        if not state["Running"]:
            break
        time.sleep(0.05)
    assert not state["Running"] and state["ExitCode"] == 0, state
    worker.close()
    assert not _container_exists(docker_backend, transport.id)
