"""Typed limits and backend choice for running untrusted code, and the process-wide default.

Commands set the default once from their flag or config section (`configure`); every worker
started without an explicit config (`SandboxWorker(config=None)`) uses it, so the choice
reaches code that builds workers deep inside runners without threading it through them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

BackendName = Literal["auto", "bwrap", "docker", "unsafe-process"]
BACKEND_NAMES: tuple[BackendName, ...] = ("auto", "bwrap", "docker", "unsafe-process")
UNSAFE_BACKEND: BackendName = "unsafe-process"


@dataclass(frozen=True)
class SandboxConfig:
    """How untrusted environment code is isolated. Defaults suit a laptop."""

    backend: BackendName = "auto"
    """`auto` picks bubblewrap when it works here, else docker when an engine answers, else
    stops with `SandboxUnavailable`; `docker` runs each worker in a container;
    `unsafe-process` (explicit opt-in only) runs a local process without bubblewrap's
    filesystem view: as root it drops to uid 65534 in fresh namespaces, or refuses."""
    memory_mb: int = 1024
    """Address-space limit of the worker (RLIMIT_AS; container memory for docker)."""
    cpu_seconds: int = 120
    """CPU-time limit over the worker's life (RLIMIT_CPU), a backstop to call timeouts."""
    max_processes: int = 32
    """Processes/threads the worker may hold (pids cgroup or container pids limit)."""
    open_files: int = 64
    """RLIMIT_NOFILE inside the worker."""
    file_size_mb: int = 16
    """Largest file the env may write in its scratch directory (RLIMIT_FSIZE)."""
    max_output_bytes: int = 1 << 20
    """Largest single reply (e.g. an observation) the worker may send back."""
    call_timeout_s: float = 5.0
    """Wall-clock limit of one reset/step/solution call; a hung worker is killed."""
    load_timeout_s: float = 10.0
    """Wall-clock limit for starting a worker and executing the env's module code."""
    docker_image: str = "spade-sandbox:py3"
    """Image the docker backend runs (built locally by `spade.sandbox.docker_image`)."""
    docker_url: str | None = None
    """Docker engine address (default: DOCKER_HOST or the local socket)."""
    extra: dict[str, str] = field(default_factory=dict)
    """Backend-specific settings, passed through unchanged."""

    def worker_limits(self) -> dict[str, int]:
        """rlimits the worker applies to itself, in the units `resource` expects."""
        return {
            "address_space": self.memory_mb << 20,
            "cpu_seconds": self.cpu_seconds,
            "open_files": self.open_files,
            "file_size": self.file_size_mb << 20,
            "core": 0,
        }

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


_default: SandboxConfig | None = None


def configure(config: SandboxConfig | None) -> None:
    """Make `config` the default of every worker started without one (None: the defaults)."""
    global _default
    _default = config


def default_config() -> SandboxConfig:
    """The configured default, else `SandboxConfig()` (backend `auto`)."""
    return _default or SandboxConfig()
