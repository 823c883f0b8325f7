"""Backend choice: `auto` never degrades, names are exact, the configured default reaches
workers, and `unsafe-process` never runs env code as root.

A machine without bubblewrap or docker is simulated here by replacing the two probes (the
real thing, a PATH without `bwrap`, is exercised end to end in tests/cli).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from spade.sandbox import (
    SandboxConfig,
    SandboxUnavailable,
    SandboxWorker,
    backend_name,
    choice,
    configure,
    default_config,
    describe_backend,
    resolve_backend,
    unsafe_process,
)
from spade.sandbox.process import bwrap_works

NO_BWRAP = "bubblewrap is not installed (apt-get install bubblewrap)"
NO_DOCKER = "no Docker engine answers at unix:///x.sock (no socket there; ...)"


@dataclass
class Probes:
    """What the bwrap and docker probes answer (None: it works), and how often each ran."""

    bwrap: str | None = NO_BWRAP
    docker: str | None = NO_DOCKER
    calls: dict[str, int] = field(default_factory=lambda: {"bwrap": 0, "docker": 0})

    def bwrap_problem(self) -> str | None:
        self.calls["bwrap"] += 1
        return self.bwrap

    def docker_problem(self, url: str | None) -> str | None:
        self.calls["docker"] += 1
        return self.docker


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> Iterator[Probes]:
    fake = Probes()
    monkeypatch.setattr(choice, "bwrap_problem", fake.bwrap_problem)
    monkeypatch.setattr(choice, "_docker_problem", fake.docker_problem)
    choice._auto_choice.cache_clear()
    yield fake
    choice._auto_choice.cache_clear()


@pytest.fixture
def configured() -> Iterator[None]:
    yield
    configure(None)


def test_auto_without_bwrap_or_docker_refuses_in_one_line(probes: Probes) -> None:
    with pytest.raises(SandboxUnavailable) as info:
        resolve_backend(SandboxConfig())
    message = str(info.value)
    assert message.startswith(f"no sandbox for untrusted code: {NO_BWRAP} and {NO_DOCKER}")
    assert "--sandbox unsafe-process" in message and "\n" not in message
    described = describe_backend(SandboxConfig())
    assert described["backend"] is None and described["unavailable"] == message


def test_auto_prefers_bwrap_then_docker(probes: Probes) -> None:
    probes.docker = None
    assert backend_name(SandboxConfig()) == "docker"
    choice._auto_choice.cache_clear()
    probes.bwrap = None
    assert backend_name(SandboxConfig()) == "bwrap"


def test_the_auto_probe_runs_once_per_process(probes: Probes) -> None:
    for _ in range(5):
        with pytest.raises(SandboxUnavailable):
            SandboxWorker(SandboxConfig())
    assert probes.calls == {"bwrap": 1, "docker": 1}


def test_a_misspelt_backend_never_means_unsafe() -> None:
    with pytest.raises(SandboxUnavailable, match="unknown sandbox backend 'process'"):
        resolve_backend(SandboxConfig(backend="process"))  # type: ignore[arg-type]


def test_workers_use_the_configured_default_and_explicit_configs_win(configured: None) -> None:
    configure(SandboxConfig(backend="unsafe-process", call_timeout_s=2.0))
    assert default_config().backend == "unsafe-process"
    worker = SandboxWorker()
    assert worker.backend.name == "unsafe-process" and worker.config.call_timeout_s == 2.0
    assert describe_backend()["unsafe"] is True
    if bwrap_works():
        assert SandboxWorker(SandboxConfig(backend="bwrap")).backend.name == "bwrap"
    configure(None)
    assert default_config() == SandboxConfig()


@pytest.mark.skipif(os.geteuid() != 0, reason="the root-only behaviour of unsafe-process")
def test_unsafe_process_as_root_runs_the_worker_as_65534_in_its_own_pid_namespace() -> None:
    with SandboxWorker(SandboxConfig(backend="unsafe-process")) as worker:
        assert worker.call("ping") == {"pid": 1, "uid": 65534}
    isolation = resolve_backend(SandboxConfig(backend="unsafe-process")).isolation()
    assert isolation["unsafe"] is True and isolation["mount_namespace"] is True


@pytest.mark.skipif(os.geteuid() != 0, reason="the root-only behaviour of unsafe-process")
def test_unsafe_process_as_root_refuses_without_an_interpreter_65534_can_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: os.PathLike[str]
) -> None:
    private = os.path.join(tmp_path, "private")
    os.mkdir(private, 0o700)  # like a venv or pyenv under /root
    python = os.path.join(private, "python3")
    os.symlink(os.path.realpath("/proc/self/exe"), python)
    monkeypatch.setattr(unsafe_process, "_candidates", lambda: [python])
    unsafe_process._probe.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable) as info:
            SandboxWorker(SandboxConfig(backend="unsafe-process"))
    finally:
        unsafe_process._probe.cache_clear()
    message = str(info.value)
    assert message.startswith("unsafe-process backend refuses to run env code as root")
    assert f"cannot run {python} as uid 65534" in message and "\n" not in message
