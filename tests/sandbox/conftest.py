"""Fixtures for sandbox tests: a Docker engine for the `docker`-marked tests.

The session uses the engine DOCKER_HOST (or the local socket) names when one answers;
otherwise it starts a private dockerd through `spade.sandbox.dockerd` and stops it at the
end. Docker tests skip, with the reason, only when neither works.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from spade.sandbox import SandboxConfig, SandboxUnavailable


@pytest.fixture(scope="session")
def docker_url() -> Iterator[str | None]:
    """The engine address for SandboxConfig.docker_url (None: DOCKER_HOST / local socket)."""
    pytest.importorskip("docker", reason="the docker SDK is not installed")
    from spade.sandbox.docker import connect
    from spade.sandbox.dockerd import DockerdError, LocalDockerd

    try:
        connect(None)
    except SandboxUnavailable as exc:
        unreachable = str(exc)
    else:
        yield None
        return
    if shutil.which("dockerd") is None and not os.path.exists("/usr/sbin/dockerd"):
        pytest.skip(f"{unreachable}; and no dockerd binary to start one")
    if os.geteuid() != 0:
        pytest.skip(f"{unreachable}; and starting dockerd here needs root")
    engine = LocalDockerd()
    try:
        engine.start()
    except DockerdError as exc:
        pytest.skip(f"no Docker engine reachable and dockerd could not start: {exc}")
    try:
        yield engine.url
    finally:
        engine.stop()


@pytest.fixture(scope="session")
def docker_backend(docker_url: str | None):  # type: ignore[no-untyped-def]
    """One backend for the session: connects and builds (or reuses) the image once."""
    from spade.sandbox.docker import DockerBackend

    return DockerBackend(SandboxConfig(backend="docker", docker_url=docker_url))


@pytest.fixture
def docker_config(docker_url: str | None) -> SandboxConfig:
    """Tight limits so hostile programs hit them fast."""
    return SandboxConfig(
        backend="docker",
        docker_url=docker_url,
        memory_mb=256,
        max_processes=16,
        file_size_mb=1,
        call_timeout_s=1.5,
        load_timeout_s=10.0,
    )
