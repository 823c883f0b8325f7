"""Atomic file replacement: a crash mid-write leaves the old file (or none), never half a file."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write `data` to `path` through a temporary file in the same folder and `os.replace`.

    Same folder, because `os.replace` is only atomic within one filesystem. The temporary file
    is created like any new file (umask applies), so the result is not left owner-only.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    partial = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(partial, "xb") as handle:
            handle.write(payload)
            handle.flush()
            # Flushed to disk before the rename: otherwise a power loss can leave the new
            # name pointing at an empty file.
            os.fsync(handle.fileno())
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
