"""What every sandbox backend provides: a way to start a worker and talk to it."""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from spade.sandbox.config import SandboxConfig

WORKER_SCRIPT = Path(__file__).with_name("_worker.py")
PACKAGE_ROOT = "/spade/lib"
"""Where bubblewrap and docker mount an entry point's packages, read-only, inside."""


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


@dataclass(frozen=True)
class PythonEntry:
    """A trusted module to run as ``python -m MODULE ARGS...`` in the sandbox, with read-only
    access to `packages` (top-level import names, e.g. ``("spade", "bfcl_eval")``) besides
    the standard library. Its code is ours; what it handles (model tool calls) is not."""

    module: str
    args: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()


class PackageMissing(LookupError):
    """A package an entry point needs is not importable on this host."""


def package_sources(packages: tuple[str, ...]) -> dict[str, Path]:
    """Where each top-level package lives here: its folder, or its module file (`six.py`, an
    extension module). Found without importing it. Namespace packages (several folders) are
    refused: one folder per name is what a sandbox mounts."""
    found: dict[str, Path] = {}
    for name in packages:
        if "." in name:
            raise PackageMissing(f"{name!r} is not a top-level package name")
        spec = importlib.util.find_spec(name)
        if spec is None:
            raise PackageMissing(f"package {name!r} is not installed for {sys.executable}")
        folders = list(spec.submodule_search_locations or [])
        if len(folders) > 1 or (folders == [] and spec.origin in (None, "built-in", "frozen")):
            raise PackageMissing(f"package {name!r} is not in one folder or file ({folders})")
        found[name] = Path(os.path.realpath(folders[0] if folders else str(spec.origin)))
    return found


def mounted_name(name: str, source: Path) -> str:
    """The name `source` (the folder or module file of package `name`) gets under
    `PACKAGE_ROOT`: the import name for a folder (an editable install's folder may be called
    anything), the file's own name for a module file (`six.py`, `_cffi_backend.cpython-...so`)."""
    return name if source.is_dir() else source.name


def entry_arguments(
    config: SandboxConfig, scratch: str, entry: PythonEntry, roots: list[str]
) -> dict[str, Any]:
    """The worker's arguments in launcher mode: `roots` go on its sys.path."""
    arguments = worker_arguments(config, scratch)
    arguments["entry"] = {
        "module": entry.module,
        "args": list(entry.args),
        "packages": list(entry.packages),
        "roots": roots,
    }
    return arguments
