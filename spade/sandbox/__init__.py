"""Run untrusted environment code in isolated, persistent worker processes."""

from spade.sandbox.config import SandboxConfig
from spade.sandbox.worker import (
    EnvCallError,
    SandboxCrash,
    SandboxError,
    SandboxOutputLimit,
    SandboxTimeout,
    SandboxWorker,
    resolve_backend,
)

__all__ = [
    "EnvCallError",
    "SandboxConfig",
    "SandboxCrash",
    "SandboxError",
    "SandboxOutputLimit",
    "SandboxTimeout",
    "SandboxWorker",
    "resolve_backend",
]
