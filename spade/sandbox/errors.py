"""What can go wrong running untrusted code, as exception types.

`SandboxError` and its subclasses are verdicts on the code: it hung, crashed, flooded its
output or broke the env contract. `SandboxUnavailable` is not one of them: no backend can
isolate code on this machine (or the chosen one cannot start), so nothing runs at all and the
command stops; it never becomes "this env is invalid".
"""

from __future__ import annotations


class SandboxError(Exception):
    """Base class: something went wrong running untrusted code."""


class SandboxTimeout(SandboxError):
    """A call exceeded its wall-clock limit; the worker was killed."""


class SandboxCrash(SandboxError):
    """The worker died (memory limit, a signal, os._exit, ...)."""


class SandboxOutputLimit(SandboxError):
    """A reply exceeded the output cap; the worker was killed."""


class EnvCallError(SandboxError):
    """The environment raised, or returned something the contract forbids.

    `kind` is 'env' (it raised) or 'contract' (bad return value)."""

    def __init__(self, kind: str, message: str, traceback: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.traceback = traceback


class SandboxUnavailable(RuntimeError):
    """No sandbox backend can run code here; the message is one line naming what is missing
    and how to get it. Raised before any untrusted code runs."""
