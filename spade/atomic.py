"""Atomic writes: a crash mid-write leaves the old file or folder (or none), never half of one.

`write_atomic` replaces one file; `write_dir_atomic` publishes a whole folder. Both write
beside the target and rename, because a rename is only atomic within one filesystem, and
both fsync before the rename: otherwise a power loss can leave the new name pointing at
empty files.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder and `os.replace`.

    The temporary file is created like any new file (umask applies), so the result is not
    left owner-only.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    partial = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(partial, "xb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def partial_prefix(target: str | Path) -> str:
    """How the temporary folders of `write_dir_atomic(target)` are named (`PREFIX*`), so a
    caller can find what a killed process left behind."""
    return f".{Path(target).name}.partial-"


def write_dir_atomic(
    target: str | Path, fill: Callable[[Path], None], *, replace: bool = False
) -> Path:
    """Create folder `target` with `fill(tmp)`, published by one rename; returns `target`.

    `fill` gets a fresh empty folder beside `target`. An existing `target` raises
    `FileExistsError` unless `replace` (then it is removed just before the rename). On any
    failure the temporary folder is removed and `target` is left as it was.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=partial_prefix(target), dir=target.parent))
    try:
        fill(tmp)
        _fsync_tree(tmp)
        tmp.chmod(0o755)  # mkdtemp made it private; the result is an ordinary folder
        if target.exists():
            if not replace:
                raise FileExistsError(f"{target}: already exists")
            shutil.rmtree(target)
        os.rename(tmp, target)
        _fsync_dir(target.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _fsync_tree(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
    _fsync_dir(root)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
