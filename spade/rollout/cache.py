"""Completion cache: (model identity, prompt, sampling settings, draw index) -> completion.

SQLite in WAL mode, one row per completion, so a re-run with the same model and settings
costs lookups only, and raising `n` reuses the draws already made. A row holds the whole
completion (text, finish reason, sampled token ids and logprobs), so a cached reply is the
same reply, tokens included. One cache may serve several threads (spade-eval's side-by-side
benchmarks): its one connection is used under a lock.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson

from spade.models.policy import Completion
from spade.rollout.requests import GenRequest

TABLE = "completions_v2"
"""v1 stored text only; its rows are left alone (a v1 cache simply misses once)."""
_STORED = (
    "text",
    "finish_reason",
    "prompt_tokens",
    "completion_tokens",
    "token_ids",
    "logprobs",
    "tool_calls",
)
"""What a row keeps: everything but the prompt's own ids (the key already names them)."""


def request_key(model_key: str, request: GenRequest, draw: int) -> str:
    """The cache key of draw `draw` of `request` from the model `model_key`."""
    payload = {
        "model": model_key,
        "messages": request.messages,
        "prompt_ids": request.prompt_ids,
        "tools": request.tools,
        "sampling": asdict(request.sampling),
        "draw": draw,
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _encode(completion: Completion) -> bytes:
    values = asdict(completion)
    return orjson.dumps({name: values[name] for name in _STORED})


def _decode(blob: bytes) -> Completion:
    return Completion(**orjson.loads(blob))


class CompletionCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} (key TEXT PRIMARY KEY, completion BLOB NOT NULL)"
        )
        self.hits = 0
        self.misses = 0

    def get_many(self, keys: list[str]) -> dict[str, Completion]:
        found: dict[str, Completion] = {}
        with self._lock:
            for start in range(0, len(keys), 500):  # SQLite caps host parameters per query
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, completion FROM {TABLE} WHERE key IN ({marks})", chunk
                )
                found.update((key, _decode(blob)) for key, blob in rows.fetchall())
            self.hits += len(found)
            self.misses += len(keys) - len(found)
        return found

    def put_many(self, items: Iterable[tuple[str, Completion]]) -> None:
        rows = [(key, _encode(completion)) for key, completion in items]
        with self._lock, self._db:
            self._db.executemany(f"INSERT OR REPLACE INTO {TABLE} VALUES (?, ?)", rows)

    def stats(self) -> dict[str, Any]:
        return {"path": str(self.path), "hits": self.hits, "misses": self.misses}

    def close(self) -> None:
        self._db.close()
