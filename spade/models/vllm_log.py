"""What a `vllm serve` log says went wrong: the one line a user needs when a server dies."""

from __future__ import annotations

import re
from pathlib import Path

EXCEPTION_LINE = re.compile(r"\b[A-Z]\w*(?:Error|Exception): \S.*")
"""A traceback's last line (vLLM's loggers prefix it with process and source)."""
POINTER = re.compile(r"stack trace|root cause", re.IGNORECASE)
"""An error that only refers to one logged before it (e.g. vLLM's EngineDeadError)."""


def last_cause(log_path: Path) -> str:
    """The cause the log gives: its last exception message (`SomeError: ...`) that is not
    a pointer to another one, else its last line that reads like an error, else its last
    line; at most 300 characters."""
    try:
        raw = log_path.read_text(errors="replace").splitlines()[-400:]
    except OSError:
        return "no log"
    found = [exception_message(raw, i) for i in range(len(raw))]
    causes = [line for line in found if line and not POINTER.search(line)]
    lines = [line.strip() for line in raw if line.strip()]
    errors = [line for line in lines if _looks_like_error(line)]
    found = [line for line in found if line]
    return ((causes or found or errors or lines or ["no output"])[-1])[:300]


def exception_message(lines: list[str], index: int) -> str:
    """The exception message on `lines[index]`, with the indented line after it (where
    pydantic puts the cause of a "1 validation error for ModelConfig"); "" if none."""
    match = EXCEPTION_LINE.search(lines[index])
    if match is None:
        return ""
    following = lines[index + 1] if index + 1 < len(lines) else ""
    detail = f" {following.strip()}" if following[:1].isspace() and following.strip() else ""
    return match.group(0).strip() + detail


def _looks_like_error(line: str) -> bool:
    if '"HTTP/1.' in line:  # an access-log line: a request's symptom, the cause is above it
        return False
    return any(word in line for word in ("Error", "ERROR", "error:", "Exception"))
