"""The BFCL backend worker, run in the sandbox by `executor.py` (`spade.sandbox.start_entry`).

Reads requests from stdin and writes replies to stdout, each a 4-byte big-endian length and
UTF-8 JSON (the framing of `spade.sandbox.wire`). Requests: `{"op": "execute", "namespace",
"entry", "long_context", "calls", "history"}` (history: earlier steps to replay first, after a
restart), `{"op": "score", "namespace", "entry", "output", "truth"}`, `{"op": "drop",
"namespace"}`, `{"op": "ping"}`. Replies: `{"ok": true, ...}` or `{"ok": false, "error": TEXT}`.

A separate process because bfcl-eval `eval`s the model's calls, and because a model can ask a
backend for work that never ends (`power(base=10, exponent=10**12)`): the host kills the
worker on a deadline, which no in-process timer can do to a running C call. Its limits
(memory, files, processes) are the sandbox's, applied before this module runs.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from typing import Any, BinaryIO

HEADER = struct.Struct(">I")


def handle(request: dict[str, Any]) -> dict[str, Any]:
    from spade.evals.bfcl import backends

    op = request.get("op")
    if op == "execute":
        for calls in request.get("history", []):
            backends.execute(request["namespace"], request["entry"], request["long_context"], calls)
        results = backends.execute(
            request["namespace"], request["entry"], request["long_context"], request["calls"]
        )
        return {"ok": True, "results": results}
    if op == "score":
        verdict = backends.score(
            request["namespace"], request["entry"], request["output"], request["truth"]
        )
        return {"ok": True, **verdict}
    if op == "drop":
        return {"ok": True, "dropped": backends.drop(request["namespace"])}
    if op == "ping":
        return {"ok": True}
    return {"ok": False, "error": f"unknown op {op!r}"}


def serve(source: BinaryIO, sink: BinaryIO) -> None:
    while True:
        header = source.read(HEADER.size)
        if len(header) < HEADER.size:
            return  # the host closed the pipe
        (size,) = HEADER.unpack(header)
        request = json.loads(source.read(size))
        try:
            reply = handle(request)
        except BaseException as exc:  # noqa: BLE001 — report anything, keep serving
            if isinstance(exc, KeyboardInterrupt):
                raise
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        data = json.dumps(reply, ensure_ascii=False).encode()
        sink.write(HEADER.pack(len(data)) + data)
        sink.flush()


def main() -> None:
    # bfcl-eval's config (when imported) makes result/score folders under BFCL_PROJECT_ROOT,
    # else next to its package, which is read-only here: the scratch dir (our cwd) it is.
    os.environ.setdefault("BFCL_PROJECT_ROOT", os.getcwd())
    # Replies go to the original stdout; anything a backend prints goes to stderr instead.
    sink = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    from spade.evals.bfcl import backends  # noqa: F401 — import once, before the first request

    serve(sys.stdin.buffer, sink)


if __name__ == "__main__":
    main()
