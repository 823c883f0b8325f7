"""The host side of the BFCL backend worker (`_worker.py`): requests with deadlines, restarts.

One worker serves a whole run: every episode's backend instances live there under the
episode's namespace, and scoring runs there too. bfcl-eval's executor `eval`s the model's
calls, so the worker runs in the sandbox, as env code does (`spade.sandbox.start_entry` on the
configured backend): a cleared environment, no network, uid 65534, the standard library plus
read-only `spade`, `bfcl_eval` and `mpmath` and nothing else of the host, writes only to its
scratch dir, the runner's memory limit (`backend_memory_mb`) and a deadline on every request
(`backend_timeout_s`). `call_guard` stays in front of `eval` as a second layer. No sandbox
here is `SandboxUnavailable` before anything runs; there is no unsandboxed fallback.

A request that misses its deadline or kills the worker (memory limit) costs that request only:
the worker is restarted, and each episode whose instances were lost replays its executed
steps before its next one (the backends are deterministic given `initial_config` and the
calls).
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import replace
from typing import Any

from spade.evals.bfcl.data import BfclEntry
from spade.sandbox import (
    PythonEntry,
    SandboxConfig,
    SandboxError,
    default_config,
    resolve_backend,
    start_entry,
)
from spade.sandbox.transport import Transport
from spade.sandbox.wire import WireClosed, WireOverflow, WireTimeout

WORKER_ENTRY = PythonEntry("spade.evals.bfcl._worker", packages=("spade", "bfcl_eval", "mpmath"))
"""What runs in the sandbox: our worker module, and the packages it imports."""
_MAX_REPLY_BYTES = 256 << 20
_STARTUP_TIMEOUT_S = 120.0
# The deadline of each request is the time limit. The worker's CPU-time rlimit spans its
# whole life (every step of every episode of a run), so it is only a backstop for a worker
# nobody waits on any more, set far beyond what a run uses (800 entries score in ~5 CPU-s).
_WORKER_CPU_S = 24 * 3600


class BackendFailure(RuntimeError):
    """The worker missed a deadline or died; it has been restarted."""


def worker_config(
    timeout_s: float, memory_mb: int, base: SandboxConfig | None = None
) -> SandboxConfig:
    """The sandbox config of the BFCL worker: `base`'s backend and settings (default: the
    configured default, i.e. `spade-eval --sandbox`) with the runner's limits."""
    return replace(
        base or default_config(),
        memory_mb=memory_mb,
        call_timeout_s=timeout_s,
        load_timeout_s=_STARTUP_TIMEOUT_S,
        cpu_seconds=_WORKER_CPU_S,
        max_output_bytes=_MAX_REPLY_BYTES,
    )


class BackendWorker:
    """A running worker; `request` sends one message and waits for its reply.

    Raises `SandboxUnavailable` (one line) where no sandbox can run it, before it starts."""

    def __init__(
        self, timeout_s: float = 30.0, memory_mb: int = 4096, sandbox: SandboxConfig | None = None
    ) -> None:
        self._transport: Transport | None = None  # first: __del__ runs even if resolving fails
        self.timeout_s = timeout_s
        self.config = worker_config(timeout_s, memory_mb, sandbox)
        self.backend = resolve_backend(self.config)
        self.generation = 0
        """Counts restarts: instances made in an older generation are gone."""
        self._names = itertools.count()
        self._start()

    def new_namespace(self) -> str:
        """A fresh model name for BFCL's instance cache (an identifier, unique per worker)."""
        return f"spade{next(self._names)}"

    def _start(self) -> None:
        try:
            transport = start_entry(WORKER_ENTRY, self.config, self.backend)
        except SandboxError as exc:  # it timed out or died starting (not: no sandbox at all)
            raise BackendFailure(f"cannot start the BFCL backend worker: {exc}") from None
        try:  # not through `request`: a worker that cannot start must not be restarted
            transport.send({"op": "ping"})
            transport.receive(_STARTUP_TIMEOUT_S)
        except (WireTimeout, WireClosed, WireOverflow, ValueError) as exc:
            reason = _failure(transport, exc, _STARTUP_TIMEOUT_S)
            raise BackendFailure(f"cannot start the BFCL backend worker: {reason}") from None
        self._transport = transport

    def request(self, message: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
        """The worker's reply; raises `BackendFailure` (after a restart) when there is none."""
        transport = self._transport
        assert transport is not None, "the worker is closed"
        timeout = timeout_s or self.timeout_s
        try:
            transport.send(message)
            reply = transport.receive(timeout)
        except (WireTimeout, WireClosed, WireOverflow, ValueError) as exc:
            reason = _failure(transport, exc, timeout)
            self._transport = None
            self.generation += 1
            self._start()
            raise BackendFailure(reason) from None
        if not reply.get("ok"):
            raise BackendFailure(str(reply.get("error")))
        return reply

    def close(self) -> None:
        if self._transport is not None:
            self._transport.kill()
            self._transport = None

    def __enter__(self) -> BackendWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


def _failure(transport: Transport, exc: Exception, timeout_s: float) -> str:
    """Kill the worker, and say why it gave no reply."""
    transport.kill()
    if isinstance(exc, WireTimeout):
        return f"the backend did not answer within {timeout_s:g} s"
    if isinstance(exc, WireOverflow):
        return f"the backend's reply was too large ({exc})"
    reason = transport.exit_reason()
    return f"the backend worker died ({reason or exc})"


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
        message = {
            "op": "execute",
            "namespace": self.namespace,
            "entry": self.entry.checker_entry(),
            "long_context": self.entry.long_context,
            "calls": calls,
            "history": self.history if stale else [],
        }
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
    message = {
        "op": "score",
        "namespace": worker.new_namespace(),
        "entry": entry.checker_entry(),
        "output": output,
        "truth": entry.ground_truth,
    }
    try:
        return worker.request(message)
    except BackendFailure as exc:
        return {
            "valid": False,
            "error_type": "spade:backend_failure",
            "error_message": str(exc),
            "turn": None,
            "refused": [],
        }
