"""The host side of the BFCL backend worker (`_worker.py`): requests with deadlines, restarts.

One worker process serves a whole run: every episode's backend instances live there under
the episode's namespace, and scoring runs there too. A request that misses its deadline or
kills the worker (memory limit) costs that request only: the worker is restarted, and each
episode whose instances were lost replays its executed steps before its next one (the
backends are deterministic given `initial_config` and the calls).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from spade.evals.bfcl.data import BfclEntry
from spade.sandbox.wire import Reader, WireClosed, WireOverflow, WireTimeout, write_message

_MAX_REPLY_BYTES = 256 << 20
_STARTUP_TIMEOUT_S = 120.0


class BackendFailure(RuntimeError):
    """The worker missed a deadline or died; it has been restarted."""


class BackendWorker:
    """A running worker; `request` sends one message and waits for its reply."""

    def __init__(self, timeout_s: float = 30.0, memory_mb: int = 4096) -> None:
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.generation = 0
        """Counts restarts: instances made in an older generation are gone."""
        self._scratch = tempfile.TemporaryDirectory(prefix="spade-bfcl-")
        self._names = itertools.count()
        self._process: subprocess.Popen[bytes] | None = None
        self._start()

    def new_namespace(self) -> str:
        """A fresh model name for BFCL's instance cache (an identifier, unique per worker)."""
        return f"spade{next(self._names)}"

    def _start(self) -> None:
        scratch = Path(self._scratch.name)
        # bfcl-eval creates result/score folders under BFCL_PROJECT_ROOT when its config is
        # imported; keep them out of the user's tree.
        env = {**os.environ, "BFCL_PROJECT_ROOT": str(scratch)}
        self._stderr = open(scratch / f"worker-{self.generation}.log", "wb")  # noqa: SIM115
        self._process = subprocess.Popen(
            [sys.executable, "-m", "spade.evals.bfcl._worker", "--memory-mb", str(self.memory_mb)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
        assert self._process.stdin is not None and self._process.stdout is not None
        self._reader = Reader(self._process.stdout.fileno(), _MAX_REPLY_BYTES)
        try:  # not through `request`: a worker that cannot start must not be restarted
            write_message(self._process.stdin.fileno(), {"op": "ping"})
            self._reader.read(_STARTUP_TIMEOUT_S)
        except (WireTimeout, WireClosed, WireOverflow) as exc:
            reason = self._failure(exc, _STARTUP_TIMEOUT_S)
            self._kill()
            raise BackendFailure(f"cannot start the BFCL backend worker: {reason}") from None

    def request(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """The worker's reply; raises `BackendFailure` (after a restart) when there is none."""
        assert self._process is not None and self._process.stdin is not None
        try:
            write_message(self._process.stdin.fileno(), message)
            reply = self._reader.read(timeout_s or self.timeout_s)
        except (WireTimeout, WireClosed, WireOverflow) as exc:
            reason = self._failure(exc, timeout_s or self.timeout_s)
            self._kill()
            self.generation += 1
            self._start()
            raise BackendFailure(reason) from None
        if not reply.get("ok"):
            raise BackendFailure(str(reply.get("error")))
        return reply

    def _failure(self, exc: Exception, timeout_s: float) -> str:
        if isinstance(exc, WireTimeout):
            return f"the backend did not answer within {timeout_s:g} s"
        if isinstance(exc, WireOverflow):
            return f"the backend's reply was too large ({exc})"
        code = self._process.poll() if self._process else None
        log = Path(self._stderr.name).read_text(errors="replace").strip().splitlines()[-1:]
        return f"the backend worker died (status {code}){': ' + log[0] if log else ''}"

    def _kill(self) -> None:
        if self._process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=5)
        for stream in (self._process.stdin, self._process.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        self._stderr.close()
        self._process = None

    def close(self) -> None:
        if self._process is not None and self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()  # the worker exits at end of input
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=5)
        self._kill()
        self._scratch.cleanup()

    def __enter__(self) -> BackendWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BackendSession:
    """One episode's backend instances in the worker."""

    def __init__(self, worker: BackendWorker, entry: BfclEntry) -> None:
        self.worker = worker
        self.entry = entry
        self.namespace = worker.new_namespace()
        self.history: list[list[str]] = []
        """Every step executed so far, replayed into a restarted worker."""
        self._generation = worker.generation

    def execute(self, calls: list[str]) -> list[str]:
        """One result text per call, as BFCL returns them to the model."""
        stale = self._generation != self.worker.generation
        message = {"op": "execute", "namespace": self.namespace,
                   "entry": self.entry.checker_entry(), "long_context": self.entry.long_context,
                   "calls": calls, "history": self.history if stale else []}  # fmt: skip
        try:
            reply = self.worker.request(message)
        except BackendFailure as exc:
            # The step counts as not executed: the restarted worker replays only the history.
            return [f"Error during execution: {exc}"] * len(calls)
        self._generation = self.worker.generation
        self.history.append(calls)
        results: list[str] = reply["results"]
        return results

    def close(self) -> None:
        if self._generation == self.worker.generation:
            with contextlib.suppress(BackendFailure):
                self.worker.request({"op": "drop", "namespace": self.namespace})


def score_in_worker(
    worker: BackendWorker, entry: BfclEntry, output: list[list[list[str]]]
) -> dict[str, Any]:
    """bfcl-eval's checker verdict on `output` (see `backends.score`); never raises."""
    message = {"op": "score", "namespace": worker.new_namespace(), "entry": entry.checker_entry(),
               "output": output, "truth": entry.ground_truth}  # fmt: skip
    try:
        return worker.request(message)
    except BackendFailure as exc:
        return {"valid": False, "error_type": "spade:backend_failure", "error_message": str(exc),
                "turn": None, "refused": []}  # fmt: skip
