"""Which backend runs untrusted code, and a small record of that choice for results.

`auto` is bubblewrap where it works, else docker where an engine answers, else
`SandboxUnavailable`: it never degrades to an unisolated process on its own. The unsafe
backend runs only when named. The `auto` probe runs once per process and engine address.
"""

from __future__ import annotations

import functools
from typing import Any

from spade.sandbox.config import BACKEND_NAMES, UNSAFE_BACKEND, SandboxConfig, default_config
from spade.sandbox.errors import SandboxUnavailable
from spade.sandbox.process import BwrapBackend, bwrap_problem
from spade.sandbox.transport import Backend

DOCKER_HINT = "apt-get install docker.io and start it, or set DOCKER_HOST"
OPT_IN_HINT = (
    f"to run env code without isolation anyway, opt in with --sandbox {UNSAFE_BACKEND} "
    f"(spade-train: sandbox.backend: {UNSAFE_BACKEND})"
)


def _docker_problem(url: str | None) -> str | None:
    """Why docker cannot run workers at `url`, or None when an engine answers."""
    from spade.sandbox.docker import EngineUnreachable, connect

    try:
        connect(url)
    except EngineUnreachable as exc:
        return f"no Docker engine answers at {exc.url} ({exc.why}; {DOCKER_HINT})"
    except SandboxUnavailable as exc:
        return str(exc).removeprefix("docker backend: ")
    return None


@functools.cache
def _auto_choice(docker_url: str | None) -> str:
    """'bwrap' or 'docker', or the one-line reason neither works (cached, so a machine
    without either is told once, not once per worker)."""
    no_bwrap = bwrap_problem()
    if no_bwrap is None:
        return "bwrap"
    no_docker = _docker_problem(docker_url)
    if no_docker is None:
        return "docker"
    return f"no sandbox for untrusted code: {no_bwrap} and {no_docker}; {OPT_IN_HINT}"


def backend_name(config: SandboxConfig | None = None) -> str:
    """The backend `config` (default: the configured default) resolves to here, or
    `SandboxUnavailable` with the one-line reason."""
    config = config or default_config()
    if config.backend == "auto":
        choice = _auto_choice(config.docker_url)
        if choice not in ("bwrap", "docker"):
            raise SandboxUnavailable(choice)
        return choice
    if config.backend == "bwrap":
        problem = bwrap_problem()
        if problem is not None:
            raise SandboxUnavailable(f"sandbox backend 'bwrap' requested, but {problem}")
    elif config.backend not in BACKEND_NAMES:  # never let a misspelt name mean "unsafe"
        known = ", ".join(BACKEND_NAMES)
        raise SandboxUnavailable(f"unknown sandbox backend {config.backend!r}; known: {known}")
    return config.backend


def resolve_backend(config: SandboxConfig | None = None) -> Backend:
    """A backend for `config` (default: the configured default); `SandboxUnavailable` when
    the requested one cannot work here. Nothing untrusted has run when this raises."""
    config = config or default_config()
    name = backend_name(config)
    if name == "bwrap":
        return BwrapBackend()
    if name == "docker":
        from spade.sandbox.docker import DockerBackend

        return DockerBackend(config)
    assert name == UNSAFE_BACKEND
    from spade.sandbox.unsafe_process import UnsafeProcessBackend

    return UnsafeProcessBackend()


def describe_backend(config: SandboxConfig | None = None) -> dict[str, Any]:
    """What runs untrusted code with `config` (default: the configured default), for results
    and manifests: `requested`, the resolved `backend` (None when unavailable) and `unsafe`;
    plus `confinement` for the unsafe backend and `unavailable` (the reason) when none works.
    Never raises, and builds no backend (no image is built just to describe one)."""
    config = config or default_config()
    try:
        name = backend_name(config)
        record = {"requested": config.backend, "backend": name, "unsafe": name == UNSAFE_BACKEND}
        if name == UNSAFE_BACKEND:
            from spade.sandbox.unsafe_process import confinement

            record["confinement"] = confinement().describe()
    except SandboxUnavailable as exc:
        return {
            "requested": config.backend,
            "backend": None,
            "unsafe": False,
            "unavailable": str(exc),
        }
    return record
