"""A persistent sandboxed worker: one process (or container) per environment.

`SandboxWorker.call` sends one request and waits for its reply under a wall-clock limit.
A worker that misses the deadline, overflows the output cap or dies is killed (with all
its children) and the call raises; `restart()` gives a fresh worker with the same config.
"""

from __future__ import annotations

import time
from typing import Any

from spade.sandbox.choice import resolve_backend
from spade.sandbox.config import SandboxConfig, default_config
from spade.sandbox.errors import EnvCallError, SandboxCrash, SandboxOutputLimit, SandboxTimeout
from spade.sandbox.transport import Backend, Transport
from spade.sandbox.wire import WireClosed, WireOverflow, WireTimeout


class SandboxWorker:
    """One live worker. Not thread-safe: one caller at a time.

    Without `config`, the process-wide default (`spade.sandbox.configure`) applies. The
    backend is resolved here, so a machine without a usable sandbox raises
    `SandboxUnavailable` before any untrusted code is sent anywhere."""

    def __init__(self, config: SandboxConfig | None = None, backend: Backend | None = None):
        self._transport: Transport | None = None  # first: __del__ runs even if resolving fails
        self.config = config or default_config()
        self.backend = backend or resolve_backend(self.config)
        self.start_seconds = 0.0

    @property
    def alive(self) -> bool:
        return self._transport is not None

    def start(self) -> None:
        started = time.perf_counter()
        transport = self.backend.spawn(self.config)
        self._transport = transport
        self._await(transport, self.config.load_timeout_s, "starting the worker")
        self.start_seconds = time.perf_counter() - started

    def call(self, op: str, timeout: float | None = None, **args: Any) -> Any:
        """Run `op` in the worker and return its result, or raise a `SandboxError`."""
        if self._transport is None:
            self.start()
        transport = self._transport
        assert transport is not None
        try:
            transport.send({"op": op, **args})
        except WireClosed as exc:
            self._fail(transport)
            raise SandboxCrash(f"worker died before {op}: {exc}") from exc
        reply = self._await(transport, timeout or self.config.call_timeout_s, op)
        if reply.get("ok"):
            return reply.get("result")
        raise EnvCallError(
            reply.get("error", "env"), reply.get("message", ""), reply.get("traceback", "")
        )

    def _await(self, transport: Transport, timeout: float, what: str) -> dict[str, Any]:
        try:
            return transport.receive(timeout)
        except WireTimeout:
            self._fail(transport)
            raise SandboxTimeout(f"{what} exceeded its {timeout:g} s limit") from None
        except WireOverflow as exc:
            self._fail(transport)
            raise SandboxOutputLimit(f"{what}: {exc}") from None
        except (WireClosed, ValueError) as exc:
            reason = self._fail(transport)
            detail = f" ({reason})" if reason else ""
            raise SandboxCrash(f"worker died during {what}{detail}: {exc}") from None

    def _fail(self, transport: Transport) -> str:
        transport.kill()
        self._transport = None
        return transport.exit_reason()

    def restart(self) -> None:
        self.close()
        self.start()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.kill()
            self._transport = None

    def __enter__(self) -> SandboxWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()
