"""Content hash of a model's weight files, cached next to them so it is computed once."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from spade.atomic import write_atomic

HASH_CACHE_NAME = ".spade-weights-sha256.json"
_CHUNK = 1 << 20


def weight_files(model_dir: Path) -> list[Path]:
    """The files holding the weights: safetensors, else PyTorch pickles."""
    for pattern in ("*.safetensors", "*.bin", "*.pt"):
        files = sorted(p for p in model_dir.glob(pattern) if p.is_file())
        if files:
            return files
    return []


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def weights_sha256(model_dir: str | os.PathLike[str]) -> str | None:
    """sha256 over the weight files' names and hashes; None when there are none.

    The hash is a sha256 of `"<file sha256>  <file name>\\n"` lines in name order (what
    `sha256sum` prints for the files), so it is stable across machines. Per-file hashes
    are cached in HASH_CACHE_NAME keyed by size and mtime, so a re-run only re-hashes
    files that changed; a read-only model dir still works, it just hashes each time.
    """
    root = Path(model_dir)
    files = weight_files(root)
    if not files:
        return None
    cache_path = root / HASH_CACHE_NAME
    cached = _read_cache(cache_path)
    fresh: dict[str, dict[str, object]] = {}
    for path in files:
        stat = path.stat()
        key = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
        entry = cached.get(path.name)
        if not (isinstance(entry, dict) and all(entry.get(k) == v for k, v in key.items())):
            entry = {**key, "sha256": file_sha256(path)}
        fresh[path.name] = entry
    if fresh != cached:
        _write_cache(cache_path, fresh)
    lines = "".join(f"{fresh[p.name]['sha256']}  {p.name}\n" for p in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def _read_cache(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_cache(path: Path, entries: dict[str, dict[str, object]]) -> None:
    # Not being able to write the cache (read-only dir) only costs time next run.
    with contextlib.suppress(OSError):
        write_atomic(path, json.dumps(entries, indent=1, sort_keys=True))
