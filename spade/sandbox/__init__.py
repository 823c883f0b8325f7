"""Run untrusted environment code in isolated, persistent worker processes."""

from spade.sandbox.choice import backend_name, describe_backend, resolve_backend
from spade.sandbox.config import (
    BACKEND_NAMES,
    UNSAFE_BACKEND,
    SandboxConfig,
    configure,
    default_config,
)
from spade.sandbox.entry import start_entry
from spade.sandbox.errors import (
    EnvCallError,
    SandboxCrash,
    SandboxError,
    SandboxOutputLimit,
    SandboxTimeout,
    SandboxUnavailable,
)
from spade.sandbox.transport import PythonEntry
from spade.sandbox.worker import SandboxWorker

__all__ = [
    "BACKEND_NAMES",
    "UNSAFE_BACKEND",
    "EnvCallError",
    "PythonEntry",
    "SandboxConfig",
    "SandboxCrash",
    "SandboxError",
    "SandboxOutputLimit",
    "SandboxTimeout",
    "SandboxUnavailable",
    "SandboxWorker",
    "backend_name",
    "configure",
    "default_config",
    "describe_backend",
    "resolve_backend",
    "start_entry",
]
