"""The sandbox backends a test runs on, as pytest parameters: bwrap (skipped where bubblewrap
does not work here), the opt-in unsafe process backend, and docker (the `docker` marker, with
its own time limit: an engine start and an image build come first)."""

from __future__ import annotations

from typing import Any

import pytest

from spade.sandbox.process import bwrap_works


def sandbox_backends(docker_timeout_s: int | None) -> list[Any]:
    """bwrap and unsafe-process, plus docker under `docker_timeout_s` unless it is None."""
    backends: list[Any] = [
        pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_works(), reason="no bubblewrap")),
        "unsafe-process",
    ]
    if docker_timeout_s is not None:
        marks = [pytest.mark.docker, pytest.mark.timeout(docker_timeout_s)]
        backends.append(pytest.param("docker", marks=marks))
    return backends
