"""What every sandbox backend provides: a way to start a worker and talk to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from spade.sandbox.config import SandboxConfig

WORKER_SCRIPT = Path(__file__).with_name("_worker.py")


class Transport(Protocol):
    """A started worker: framed messages in and out, and a hard kill."""

    def send(self, message: dict[str, Any]) -> None: ...

    def receive(self, timeout: float) -> dict[str, Any]: ...

    def kill(self) -> None:
        """Kill the worker and everything it started; idempotent."""
        ...

    def exit_reason(self) -> str:
        """Why the worker ended, in words (e.g. 'killed by SIGKILL'), or '' if unknown."""
        ...


class Backend(Protocol):
    """Starts isolated workers. `isolation()` reports which protections are active."""

    name: str

    def spawn(self, config: SandboxConfig) -> Transport: ...

    def isolation(self) -> dict[str, Any]: ...


def worker_arguments(config: SandboxConfig, scratch: str) -> dict[str, Any]:
    """The JSON the worker script receives as argv[1]."""
    return {
        "scratch": scratch,
        "limits": config.worker_limits(),
        "max_message": config.max_output_bytes,
    }
