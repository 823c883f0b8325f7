"""Checkpoint directories: written whole or not at all, the last few kept, RNG states saved.

A run's checkpoints live under one root as `step-000012/` dirs. Each is filled in a hidden
temporary dir next to them and renamed into place, so a process killed at any moment leaves
either the previous checkpoint or the new one, never half of one; `latest_checkpoint` only
ever sees complete ones.
"""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from spade.atomic import partial_prefix, write_dir_atomic

_NAME = re.compile(r"^step-(\d+)$")
MARKER = "learner.json"
"""Written by the learner into every checkpoint; its presence marks a learner checkpoint."""


def checkpoint_name(step: int) -> str:
    return f"step-{step:06d}"


def list_checkpoints(root: str | Path) -> list[Path]:
    """Complete checkpoints under `root`, oldest first."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = []
    for path in root.iterdir():
        match = _NAME.match(path.name)
        if match and (path / MARKER).is_file():
            found.append((int(match.group(1)), path))
    return [path for _, path in sorted(found)]


def latest_checkpoint(root: str | Path) -> Path | None:
    """The newest complete checkpoint under `root`, or None when there is none."""
    found = list_checkpoints(root)
    return found[-1] if found else None


def write_atomically(target: Path, fill: Callable[[Path], None], marker: str) -> Path:
    """Create dir `target` with `fill(tmp_dir)`, published by one rename.

    An existing `target` is replaced only when it is empty or holds `marker` (it is one
    of ours): a mistyped output path must never delete someone's directory.
    """
    if target.exists() and not (target / marker).is_file() and any(target.iterdir()):
        raise FileExistsError(f"{target} exists and was not written by spade; choose a new path")
    for stale in target.parent.glob(f"{partial_prefix(target)}*"):  # left by a killed process
        shutil.rmtree(stale, ignore_errors=True)
    # replace: the same step saved again (e.g. after a resume): newest wins.
    return write_dir_atomic(target, fill, replace=True)


def prune_checkpoints(root: str | Path, keep_last: int) -> None:
    """Delete all but the newest `keep_last` complete checkpoints."""
    if keep_last < 1:
        raise ValueError(f"keep_last must be >= 1, got {keep_last}")
    for path in list_checkpoints(root)[:-keep_last]:
        shutil.rmtree(path, ignore_errors=True)


def rng_state() -> dict[str, Any]:
    """Python, NumPy and torch (CPU and every CUDA device) RNG states, `torch.load`-safe."""
    kind, keys, pos, has_gauss, cached = cast(tuple[Any, ...], np.random.get_state())
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, cached],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(_as_tuples(state["python"]))
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _as_tuples(value: Any) -> Any:
    # random.setstate wants tuples all the way down; a serialiser may hand back lists.
    return tuple(_as_tuples(v) for v in value) if isinstance(value, list | tuple) else value
