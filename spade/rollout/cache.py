"""Completion cache: (model identity, prompt, generation settings, draw index) -> text.

SQLite in WAL mode, one row per completion, so a re-run with the same model and settings
costs lookups only, and raising `n` reuses the draws already made.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from spade.evals.samples import GenRequest


def request_key(model_key: str, request: GenRequest, draw: int) -> str:
    """The cache key of draw `draw` of `request` from the model `model_key`."""
    settings = request.settings.as_dict()
    settings.pop("n")  # n changes how many draws are asked for, not what each draw is
    payload = {
        "model": model_key,
        "messages": request.messages,
        "tools": request.tools,
        "settings": settings,
        "draw": draw,
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


class CompletionCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS completions (key TEXT PRIMARY KEY, text TEXT NOT NULL)"
        )
        self.hits = 0
        self.misses = 0

    def get_many(self, keys: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for start in range(0, len(keys), 500):  # SQLite caps host parameters per query
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT key, text FROM completions WHERE key IN ({marks})", chunk
            )
            found.update(rows.fetchall())
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put_many(self, items: Iterable[tuple[str, str]]) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO completions VALUES (?, ?)", items)

    def stats(self) -> dict[str, Any]:
        return {"path": str(self.path), "hits": self.hits, "misses": self.misses}

    def close(self) -> None:
        self._db.close()
