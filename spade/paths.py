"""Where spade keeps its caches on this machine (models, corpus, completions)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

CACHE_ENV_VAR = "SPADE_CACHE_DIR"


def spade_cache_dir() -> Path:
    """Root of spade's caches: $SPADE_CACHE_DIR, else the platform's user cache dir."""
    return Path(os.environ.get(CACHE_ENV_VAR) or platformdirs.user_cache_dir("spade"))
