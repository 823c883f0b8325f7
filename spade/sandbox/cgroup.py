"""A per-worker pids (and memory) cgroup, when this host lets us make one.

rlimits alone cannot stop a fork bomb started by root-owned workers (the kernel exempts
uid 0 from RLIMIT_NPROC), so each worker gets its own pids cgroup where the host allows it.
Works with cgroup v2 (unified) and v1 (separate `pids` and `memory` hierarchies).
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")


def _v2_parent() -> Path | None:
    if (ROOT / "cgroup.controllers").exists() and "pids" in (
        (ROOT / "cgroup.subtree_control").read_text()
        if (ROOT / "cgroup.subtree_control").exists()
        else ""
    ):
        return ROOT / "spade"
    return None


class WorkerCgroup:
    """Limits one worker's process count and memory; kills everything inside on close."""

    def __init__(self, dirs: list[Path]) -> None:
        self.dirs = dirs

    @classmethod
    def create(cls, max_pids: int, memory_bytes: int) -> WorkerCgroup | None:
        """Make the cgroup, or return None where the host does not allow it."""
        name = f"spade-{uuid.uuid4().hex[:12]}"
        dirs: list[Path] = []
        try:
            parent = _v2_parent()
            if parent is not None:
                parent.mkdir(exist_ok=True)
                with contextlib.suppress(OSError):
                    (parent / "cgroup.subtree_control").write_text("+pids +memory")
                path = parent / name
                path.mkdir()
                dirs.append(path)
                (path / "pids.max").write_text(str(max_pids))
                with contextlib.suppress(OSError):
                    (path / "memory.max").write_text(str(memory_bytes))
            elif (ROOT / "pids" / "cgroup.procs").exists():
                path = ROOT / "pids" / name
                path.mkdir()
                dirs.append(path)
                (path / "pids.max").write_text(str(max_pids))
                memory = ROOT / "memory" / name
                with contextlib.suppress(OSError):
                    memory.mkdir()
                    dirs.append(memory)
                    (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
            else:
                return None
        except OSError:
            cls(dirs).remove()
            return None
        return cls(dirs)

    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def enter(self) -> None:
        """Move the calling process in; meant for `preexec_fn` in the child."""
        pid = str(os.getpid())
        for procs in self.procs_files():
            with open(procs, "w") as handle:
                handle.write(pid)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (d / "cgroup.procs").read_text().split())
        return found

    def kill_all(self) -> None:
        for d in self.dirs:
            if (d / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    (d / "cgroup.kill").write_text("1")
        # v1 has no cgroup.kill: kill until empty (a fork bomb may race us a few rounds).
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        for d in self.dirs:
            with contextlib.suppress(OSError):
                d.rmdir()
