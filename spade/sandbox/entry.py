"""Run a trusted Python entry point (a module of an installed package) in the sandbox.

Some of our own code handles untrusted input in ways no allow-list can make safe: bfcl-eval's
executor `eval`s model tool calls. `start_entry` runs such a module (`PythonEntry`) under the
same isolation and limits as env code, on the configured backend, with read-only access to the
packages it names and nothing else of the host's Python: the sandbox worker script, started in
launcher mode (`_worker._run_entry`), applies the config's rlimits, moves into the scratch dir,
imports the packages (a failure is one line, not a silent death) and runs the module as
``__main__``; after the ready handshake, stdin and stdout carry the module's own protocol.

Per backend, the packages are reached so:
- bwrap: each package folder (or module file) bound read-only under /spade/lib; the rest of
  the host (site-packages included) stays invisible;
- docker: the same folders bind-mounted read-only, which needs an engine that sees this
  machine's files, and an image Python that can import them;
- unsafe-process: the folders holding them on sys.path as they are (that backend shows the
  whole host filesystem, read-only, anyway).
The environment inside is the sandbox's cleared one; there is no network; only the scratch
dir is writable. As everywhere in `spade.sandbox`, no backend means `SandboxUnavailable`,
never an unsandboxed process.
"""

from __future__ import annotations

from typing import Any

from spade.sandbox.choice import resolve_backend
from spade.sandbox.config import SandboxConfig, default_config
from spade.sandbox.errors import SandboxCrash, SandboxError, SandboxTimeout, SandboxUnavailable
from spade.sandbox.transport import (
    Backend,
    PackageMissing,
    PythonEntry,
    Transport,
    package_sources,
)
from spade.sandbox.wire import WireClosed, WireOverflow, WireTimeout


def start_entry(
    entry: PythonEntry, config: SandboxConfig | None = None, backend: Backend | None = None
) -> Transport:
    """`entry` running in the sandbox, past its ready handshake: `send`/`receive` now speak the
    module's own protocol (same framing as `spade.sandbox.wire`), `kill()` ends it.

    `config` defaults to the configured default; its limits apply (`load_timeout_s` bounds
    the start). `SandboxUnavailable` (one line) when no backend works here, when a package
    is missing, or when the sandbox cannot give the entry its packages; `SandboxTimeout` or
    `SandboxCrash` when it did not start in time or died starting."""
    config = config or default_config()
    backend = backend or resolve_backend(config)
    spawn = getattr(backend, "spawn_entry", None)  # bwrap, docker and unsafe-process have it
    if spawn is None:
        raise SandboxUnavailable(f"the {backend.name} sandbox backend cannot run {entry.module}")
    try:
        sources = package_sources(entry.packages)
    except PackageMissing as exc:
        raise SandboxUnavailable(f"cannot run {entry.module} in the sandbox: {exc}") from None
    try:
        transport: Transport = spawn(config, entry, sources)
    except SandboxError as exc:
        raise SandboxUnavailable(_cannot(backend, entry, str(exc))) from None
    reply = _ready(transport, config.load_timeout_s, f"starting {entry.module}")
    if not reply.get("ok"):
        transport.kill()
        raise SandboxUnavailable(_cannot(backend, entry, str(reply.get("message", reply))))
    return transport


def _cannot(backend: Backend, entry: PythonEntry, why: str) -> str:
    why = why.strip().splitlines()[0] if why.strip() else "no reason given"
    return f"the {backend.name} sandbox cannot run {entry.module}: {why}"


def _ready(transport: Transport, timeout: float, what: str) -> dict[str, Any]:
    try:
        return transport.receive(timeout)
    except WireTimeout:
        transport.kill()
        raise SandboxTimeout(f"{what} exceeded its {timeout:g} s limit") from None
    except (WireClosed, WireOverflow, ValueError) as exc:
        transport.kill()
        reason = transport.exit_reason()
        died = f"the worker died ({reason})" if reason else "the worker died"
        raise SandboxCrash(f"{what}: {died}: {exc}") from None
