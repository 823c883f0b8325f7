"""The weights hash covers the weight files' contents and is cached by size and mtime."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from spade.models import weights_sha256
from spade.models.weights import HASH_CACHE_NAME


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def test_hash_is_sha256sum_of_the_weight_files(tmp_path: Path) -> None:
    a = _write(tmp_path / "model-00001.safetensors", b"first shard")
    b = _write(tmp_path / "model-00002.safetensors", b"second shard")
    (tmp_path / "config.json").write_text("{}")  # not a weight file: not hashed
    listing = f"{a}  model-00001.safetensors\n{b}  model-00002.safetensors\n"
    assert weights_sha256(tmp_path) == hashlib.sha256(listing.encode()).hexdigest()


def test_hash_is_cached_and_refreshed_when_a_file_changes(tmp_path: Path) -> None:
    weights = tmp_path / "model.safetensors"
    _write(weights, b"v1")
    first = weights_sha256(tmp_path)
    cache = json.loads((tmp_path / HASH_CACHE_NAME).read_text())
    assert cache["model.safetensors"]["sha256"] == hashlib.sha256(b"v1").hexdigest()

    # A cache hit is trusted: poison the cached hash (same size and mtime) and it is used.
    cache["model.safetensors"]["sha256"] = "0" * 64
    (tmp_path / HASH_CACHE_NAME).write_text(json.dumps(cache))
    assert weights_sha256(tmp_path) != first

    _write(weights, b"v2")
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    second = weights_sha256(tmp_path)
    assert second not in (first, None)
    assert (
        json.loads((tmp_path / HASH_CACHE_NAME).read_text())["model.safetensors"]["sha256"]
        == hashlib.sha256(b"v2").hexdigest()
    )


def test_no_weight_files_means_no_hash(tmp_path: Path) -> None:
    assert weights_sha256(tmp_path) is None
