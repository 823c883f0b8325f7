"""Workers as local processes: the pipe transport, and the bubblewrap backend.

bubblewrap layers: fresh user, pid, network, ipc, uts and cgroup namespaces; a read-only
view of only the interpreter and system libraries (no /etc, /home, /root, host /tmp); a
size-capped tmpfs scratch dir as the only writable place; uid 65534 inside; all
capabilities dropped; a cleared environment. On top: rlimits (address space, CPU, open
files, file size, no core dumps), a per-worker pids/memory cgroup where the host allows one,
and a wall-clock limit on every call enforced by the caller. (`unsafe_process.py` is the
explicit opt-in for hosts without bubblewrap.)
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spade.sandbox.cgroup import WorkerCgroup
from spade.sandbox.config import SandboxConfig
from spade.sandbox.transport import (
    PACKAGE_ROOT,
    WORKER_SCRIPT,
    PythonEntry,
    entry_arguments,
    mounted_name,
    worker_arguments,
)
from spade.sandbox.wire import Reader, WireClosed, write_message

SCRATCH = "/scratch"
SANDBOX_UID = 65534
_EXIT_GRACE_S = 0.5
# Only these reach the worker; nothing of the host's environment does.
CLEAN_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
# No site-packages (-S, -s); not -I, which would also drop PYTHONHASHSEED, and a fixed hash
# seed is what makes set/dict-order-dependent envs replay identically in every worker.
PYTHON_FLAGS = ("-s", "-S")


def interpreter() -> Path:
    """The base interpreter (not a venv shim: envs get the standard library only)."""
    candidate = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return candidate if candidate.exists() else Path(os.path.realpath(sys.executable))


class ProcessTransport:
    """A worker subprocess reached through its stdin/stdout pipes."""

    def __init__(
        self,
        argv: list[str],
        config: SandboxConfig,
        cwd: str,
        cgroup: WorkerCgroup | None,
        cleanup: str | None,
    ) -> None:
        self.cgroup = cgroup
        self._cleanup = cleanup
        # Runs in the child between fork and exec: only a write to the cgroup's procs file.
        prepare_child = cgroup.enter if cgroup is not None else None
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=CLEAN_ENV,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=prepare_child,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin.fileno()
        self._reader = Reader(self.process.stdout.fileno(), config.max_output_bytes + 4096)

    def send(self, message: dict[str, Any]) -> None:
        write_message(self._in, message)

    def receive(self, timeout: float) -> dict[str, Any]:
        try:
            return self._reader.read(timeout)
        except WireClosed:
            # The worker closed its end, so it is most likely dying: a moment to exit lets
            # exit_reason say how (SIGSEGV, a status) instead of the SIGKILL of kill().
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=_EXIT_GRACE_S)
            raise

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill_all()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self._cleanup:
            shutil.rmtree(self._cleanup, ignore_errors=True)
            self._cleanup = None

    def exit_reason(self) -> str:
        code = self.process.poll()
        if code is None:
            return ""
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exited with status {code}"


BWRAP_HINT = "apt-get install bubblewrap"


@functools.cache
def bwrap_problem() -> str | None:
    """Why bubblewrap cannot run workers here (not installed, or it cannot create its
    namespaces, as in some containers), or None when it can; probed once per process."""
    path = shutil.which("bwrap")
    if path is None:
        return f"bubblewrap is not installed ({BWRAP_HINT})"
    argv = [path, *_bwrap_mounts(), "--", str(interpreter()), *PYTHON_FLAGS, "-c", "pass"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, env=CLEAN_ENV)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap at {path} does not run ({type(exc).__name__}: {exc})"
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"bubblewrap cannot create its sandbox here ({said[-1] if said else done.returncode})"


def bwrap_works() -> bool:
    """Whether bubblewrap can run workers on this host."""
    return bwrap_problem() is None


def _bwrap_mounts(scratch_bytes: int = 64 << 20, extra: Sequence[str] = ()) -> list[str]:
    """bubblewrap's options up to the command; `extra` options (more read-only binds) go
    before the final read-only remount of the root."""
    args = [
        "--unshare-all",  # user, pid, net, ipc, uts, cgroup namespaces
        "--die-with-parent",
        "--new-session",
        "--uid", str(SANDBOX_UID),
        "--gid", str(SANDBOX_UID),
        "--cap-drop", "ALL",
        "--clearenv",
        "--ro-bind", "/usr", "/usr",
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", str(scratch_bytes), "--tmpfs", SCRATCH,
        "--ro-bind", str(WORKER_SCRIPT), "/spade/worker.py",
        "--chdir", SCRATCH,
    ]  # fmt: skip # a table: one option and its values a line
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    prefix = os.path.realpath(sys.base_prefix)
    if not prefix.startswith("/usr/"):
        args += ["--ro-bind", prefix, prefix]
    for key, value in CLEAN_ENV.items():
        args += ["--setenv", key, value]
    # bwrap's root is a tmpfs: without this, writes to "/" would be unbounded memory.
    return [*args, *extra, "--remount-ro", "/"]


class BwrapBackend:
    name = "bwrap"

    def spawn(self, config: SandboxConfig) -> ProcessTransport:
        return self._spawn(config, worker_arguments(config, SCRATCH), ())

    def spawn_entry(
        self, config: SandboxConfig, entry: PythonEntry, sources: dict[str, Path]
    ) -> ProcessTransport:
        """The worker as launcher of `entry`: each package folder (or module file) in
        `sources` is bound read-only under /spade/lib, and nothing else of the host is added."""
        binds: list[str] = []
        for name, path in sources.items():
            binds += ["--ro-bind", str(path), f"{PACKAGE_ROOT}/{mounted_name(name, path)}"]
        arguments = entry_arguments(config, SCRATCH, entry, [PACKAGE_ROOT])
        return self._spawn(config, arguments, binds)

    def _spawn(
        self, config: SandboxConfig, arguments: dict[str, Any], binds: Sequence[str]
    ) -> ProcessTransport:
        cgroup = WorkerCgroup.create(config.max_processes, config.memory_mb << 20)
        scratch_bytes = min(config.file_size_mb << 22, 256 << 20)  # 4 files' worth, ≤256 MB
        argv = [
            shutil.which("bwrap") or "bwrap",
            *_bwrap_mounts(scratch_bytes, binds),
            "--",
            str(interpreter()),
            *PYTHON_FLAGS,
            "/spade/worker.py",
            json.dumps(arguments),
        ]
        return ProcessTransport(argv, config, "/", cgroup, cleanup=None)

    def isolation(self) -> dict[str, Any]:
        probe = WorkerCgroup.create(1, 1 << 20)
        cgroups = probe is not None
        if probe is not None:
            probe.remove()
        return {
            "backend": self.name,
            "unsafe": False,
            "network_namespace": True,
            "pid_namespace": True,
            "mount_namespace": True,
            "user_namespace": True,
            "unprivileged_uid": True,
            "filesystem_view": "read-only interpreter and system libraries only",
            "writable": "size-capped tmpfs scratch dir",
            "environment": "cleared",
            "rlimits": True,
            "process_limit": "pids cgroup" if cgroups else "none (no writable cgroup)",
            "memory_cgroup": cgroups,
        }
