"""`unsafe-process`: workers as local processes where neither bubblewrap nor docker exists.

Only ever used when chosen by name (`--sandbox unsafe-process`, `sandbox.backend:
unsafe-process`); `auto` never falls back to it. Each worker starts as `_confine.py`, which
confines itself and then execs the ordinary worker (see that file for the steps):

- as root: private mount, network, pid, ipc and uts namespaces; every mount read-only but a
  size-capped tmpfs scratch dir; uid/gid 65534 with no groups. The interpreter must be one
  uid 65534 can run: this one when its folders are readable to others, else the system
  `/usr/bin/python3` (the worker needs only the standard library). Where no such interpreter
  exists, or the namespaces cannot be made, the backend refuses with `SandboxUnavailable`:
  it never runs env code as root.
- not root: the same inside a user namespace, where the host allows one; where it does not,
  only a cleared environment, a scratch cwd and rlimits remain (`isolation()` says so).

Unlike bubblewrap, the host's files stay readable wherever their permissions allow.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spade.sandbox.cgroup import WorkerCgroup
from spade.sandbox.config import UNSAFE_BACKEND, SandboxConfig
from spade.sandbox.errors import SandboxUnavailable
from spade.sandbox.process import (
    CLEAN_ENV,
    PYTHON_FLAGS,
    SANDBOX_UID,
    ProcessTransport,
    interpreter,
)
from spade.sandbox.transport import (
    WORKER_SCRIPT,
    PythonEntry,
    entry_arguments,
    worker_arguments,
)

CONFINE_SCRIPT = Path(__file__).with_name("_confine.py")
SYSTEM_PYTHON = "/usr/bin/python3"
_PROBE_TIMEOUT_S = 20
_PROBE_SCRATCH_BYTES = 1 << 20


@dataclass(frozen=True)
class Confinement:
    """What the probe found works here: the worker's interpreter and its confinement."""

    python: str
    namespaces: bool
    as_root: bool

    def describe(self) -> str:
        if not self.namespaces:
            return "MISSING: no namespaces (user namespaces refused); cleared env, scratch cwd"
        who = "uid/gid 65534" if self.as_root else "uid 65534 in a user namespace"
        return f"{who}; private mount, network, pid, ipc, uts namespaces; host mounts read-only"


def _launcher_spec(python: str, base: str, namespaces: bool, scratch_bytes: int) -> dict[str, Any]:
    return {
        "python": python,
        "worker": str(WORKER_SCRIPT),
        "base": base,
        "namespaces": namespaces,
        "scratch_bytes": scratch_bytes,
        "probe": False,
    }


def _launcher_argv(spec: dict[str, Any]) -> list[str]:
    return [str(interpreter()), *PYTHON_FLAGS, str(CONFINE_SCRIPT), json.dumps(spec)]


def _try(python: str, namespaces: bool) -> str | None:
    """Start the launcher in probe mode; None when it worked, else why not (one line)."""
    base = os.path.realpath(tempfile.mkdtemp(prefix="spade-probe-"))
    spec = _launcher_spec(python, base, namespaces, _PROBE_SCRATCH_BYTES)
    expected: dict[str, Any] = {"uid": SANDBOX_UID} if namespaces else {}
    if os.geteuid() == 0:
        expected["groups"] = []
    spec.update(probe=True, expect=expected)
    try:
        done = subprocess.run(
            _launcher_argv(spec),
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            env=CLEAN_ENV,
            cwd="/",
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the launcher did not run ({type(exc).__name__}: {exc})"
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1] if said else f"exit status {done.returncode}"


def _candidates() -> list[str]:
    found: list[str] = []
    for python in (str(interpreter()), SYSTEM_PYTHON):
        if os.path.exists(python) and os.path.realpath(python) not in map(os.path.realpath, found):
            found.append(python)
    return found


@functools.cache
def _probe() -> Confinement | str:
    """The confinement that works here, or why none does; probed once per process."""
    as_root = os.geteuid() == 0
    problems: list[str] = []
    for python in _candidates():
        problem = _try(python, namespaces=True)
        if problem is None:
            return Confinement(python, True, as_root)
        problems.append(f"{python}: {problem}")
    if not as_root:
        python = str(interpreter())
        problem = _try(python, namespaces=False)
        if problem is None:
            return Confinement(python, False, as_root)
        problems.append(f"{python} without namespaces: {problem}")
        return f"{UNSAFE_BACKEND} backend cannot start a worker here: " + "; ".join(problems)
    if problems and all(": unshare " in problem for problem in problems):
        fix = "this host does not let root create namespaces (a container without "
        fix += "CAP_SYS_ADMIN?); use bubblewrap or docker, or run as a non-root user"
    else:
        fix = f"install a system python3 (3.10+) at {SYSTEM_PYTHON}, or make the interpreter's "
        fix += "folders readable to others (chmod o+rx), or install bubblewrap"
    found = "; ".join(problems) or "no interpreter found"
    return (
        f"{UNSAFE_BACKEND} backend refuses to run env code as root: no Python could run as "
        f"uid {SANDBOX_UID} in fresh namespaces ({found}); {fix}"
    )


def confinement() -> Confinement:
    """How `unsafe-process` workers are confined here, or `SandboxUnavailable`."""
    found = _probe()
    if isinstance(found, str):
        raise SandboxUnavailable(found)
    return found


class UnsafeProcessBackend:
    """See the module docstring. Constructing it probes (once per process) and refuses with
    `SandboxUnavailable` where it cannot keep env code from running as root."""

    name: str = UNSAFE_BACKEND

    def __init__(self) -> None:
        self.confinement = confinement()

    def spawn(self, config: SandboxConfig) -> ProcessTransport:
        return self._spawn(config, worker_arguments(config, ""))

    def spawn_entry(
        self, config: SandboxConfig, entry: PythonEntry, sources: dict[str, Path]
    ) -> ProcessTransport:
        """The worker as launcher of `entry`. Nothing can be mounted for it here, so the
        folders holding the packages go on its sys.path as they are: the host's files are
        readable per their permissions anyway (see the module docstring)."""
        roots = list(dict.fromkeys(str(path.parent) for path in sources.values()))
        return self._spawn(config, entry_arguments(config, "", entry, roots))

    def _spawn(self, config: SandboxConfig, arguments: dict[str, Any]) -> ProcessTransport:
        # `arguments` have no scratch path yet: the launcher fills it in.
        base = os.path.realpath(tempfile.mkdtemp(prefix="spade-unsafe-"))
        cgroup = WorkerCgroup.create(config.max_processes, config.memory_mb << 20)
        if cgroup is None:  # the worker is never root, so RLIMIT_NPROC applies to it
            arguments["limits"]["processes"] = config.max_processes
        scratch_bytes = min(config.file_size_mb << 22, 256 << 20)  # as bwrap: 4 files, ≤256 MB
        spec = _launcher_spec(
            self.confinement.python, base, self.confinement.namespaces, scratch_bytes
        )
        spec["worker_arguments"] = arguments
        return ProcessTransport(_launcher_argv(spec), config, "/", cgroup, cleanup=base)

    def isolation(self) -> dict[str, Any]:
        confined = self.confinement.namespaces
        return {
            "backend": self.name,
            "unsafe": True,
            "confinement": self.confinement.describe(),
            "interpreter": self.confinement.python,
            "network_namespace": confined,
            "pid_namespace": confined,
            "mount_namespace": confined,
            "user_namespace": confined and not self.confinement.as_root,
            "unprivileged_uid": confined or not self.confinement.as_root,
            "filesystem_view": "MISSING: the host filesystem, readable per its permissions"
            + (", all of it read-only" if confined else ", writable per its permissions"),
            "writable": "size-capped tmpfs scratch dir" if confined else "MISSING: not confined",
            "environment": "cleared",
            "rlimits": True,
        }
