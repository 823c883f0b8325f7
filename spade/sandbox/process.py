"""Workers as local processes: under bubblewrap where it works, else a plain process.

bubblewrap layers: fresh user, pid, network, ipc, uts and cgroup namespaces; a read-only
view of only the interpreter and system libraries (no /etc, /home, /root, host /tmp); a
size-capped tmpfs scratch dir as the only writable place; uid 65534 inside; all
capabilities dropped; a cleared environment. Both modes add rlimits (address space, CPU,
open files, file size, no core dumps), a per-worker pids/memory cgroup where the host
allows one, and a wall-clock limit on every call enforced by the caller.
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
import tempfile
from pathlib import Path
from typing import Any

from spade.sandbox.cgroup import WorkerCgroup
from spade.sandbox.config import SandboxConfig
from spade.sandbox.transport import WORKER_SCRIPT, worker_arguments
from spade.sandbox.wire import Reader, write_message

SCRATCH = "/scratch"
SANDBOX_UID = 65534
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
        setuid: bool,
    ) -> None:
        self.cgroup = cgroup
        self._cleanup = cleanup

        def prepare_child() -> None:  # runs in the child between fork and exec
            if cgroup is not None:
                cgroup.enter()
            if setuid:
                os.setgroups([])
                os.setgid(SANDBOX_UID)
                os.setuid(SANDBOX_UID)

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
        return self._reader.read(timeout)

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


@functools.cache
def bwrap_works() -> bool:
    """Whether bubblewrap can create its namespaces on this host (it cannot in some
    containers); probed once per process."""
    path = shutil.which("bwrap")
    if path is None:
        return False
    argv = [path, *_bwrap_mounts(), "--", str(interpreter()), *PYTHON_FLAGS, "-c", "pass"]
    try:
        return subprocess.run(argv, capture_output=True, timeout=10, env=CLEAN_ENV).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _bwrap_mounts(scratch_bytes: int = 64 << 20) -> list[str]:
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
    ]  # fmt: skip
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
    return [*args, "--remount-ro", "/"]


def _world_executable(path: Path) -> bool:
    """Whether any user can reach and execute `path` (every parent searchable)."""
    path = Path(os.path.realpath(path))
    parents = [p for p in path.parents]
    return bool(path.stat().st_mode & 0o001) and all(p.stat().st_mode & 0o001 for p in parents)


class BwrapBackend:
    name = "bwrap"

    def spawn(self, config: SandboxConfig) -> ProcessTransport:
        cgroup = WorkerCgroup.create(config.max_processes, config.memory_mb << 20)
        scratch_bytes = min(config.file_size_mb << 22, 256 << 20)  # 4 files' worth, ≤256 MB
        argv = [
            shutil.which("bwrap") or "bwrap",
            *_bwrap_mounts(scratch_bytes),
            "--",
            str(interpreter()),
            *PYTHON_FLAGS,
            "/spade/worker.py",
            json.dumps(worker_arguments(config, SCRATCH)),
        ]
        return ProcessTransport(argv, config, "/", cgroup, cleanup=None, setuid=False)

    def isolation(self) -> dict[str, Any]:
        probe = WorkerCgroup.create(1, 1 << 20)
        cgroups = probe is not None
        if probe is not None:
            probe.remove()
        return {
            "backend": self.name,
            "network_namespace": True,
            "pid_namespace": True,
            "user_namespace": True,
            "unprivileged_uid": True,
            "filesystem_view": "read-only interpreter and system libraries only",
            "writable": "size-capped tmpfs scratch dir",
            "environment": "cleared",
            "rlimits": True,
            "process_limit": "pids cgroup" if cgroups else "none (no writable cgroup)",
            "memory_cgroup": cgroups,
        }


class PlainProcessBackend:
    """Fallback where bubblewrap cannot run: rlimits, a scratch cwd, a scrubbed environment,
    and (when started as root) uid 65534 and a network namespace via `unshare`. The host
    filesystem stays readable wherever its permissions allow."""

    name = "process"

    def _unshare_prefix(self) -> list[str]:
        tool = shutil.which("unshare")
        if tool is None or os.geteuid() != 0:
            return []
        probe = subprocess.run([tool, "--net", "true"], capture_output=True)
        return [tool, "--net"] if probe.returncode == 0 else []

    def _can_drop_root(self) -> bool:
        # uid 65534 must still be able to run the interpreter (pyenv under /root is not).
        return os.geteuid() == 0 and _world_executable(interpreter())

    def spawn(self, config: SandboxConfig) -> ProcessTransport:
        scratch = tempfile.mkdtemp(prefix="spade-scratch-")
        is_root = self._can_drop_root()
        if is_root:
            os.chown(scratch, SANDBOX_UID, SANDBOX_UID)
        cgroup = WorkerCgroup.create(config.max_processes, config.memory_mb << 20)
        limits = worker_arguments(config, scratch)
        if cgroup is None and os.geteuid() != 0:
            limits["limits"]["processes"] = config.max_processes
        argv = [
            *self._unshare_prefix(),
            str(interpreter()),
            *PYTHON_FLAGS,
            str(WORKER_SCRIPT),
            json.dumps(limits),
        ]
        return ProcessTransport(argv, config, scratch, cgroup, cleanup=scratch, setuid=is_root)

    def isolation(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "network_namespace": bool(self._unshare_prefix()),
            "pid_namespace": False,
            "user_namespace": False,
            "unprivileged_uid": self._can_drop_root() or os.geteuid() != 0,
            "filesystem_view": "MISSING: host filesystem readable per its permissions",
            "writable": "scratch dir (and anything the uid may write)",
            "environment": "cleared",
            "rlimits": True,
        }
