"""Exceptions raised on a Ray worker, carried back to be raised again on the driver.

An exception crosses as its class, `args` and attribute dict and is rebuilt without calling
its `__init__`, so types whose constructor takes other arguments than `args` (the sandbox's
`EnvCallError`) come back whole: same type, same message, same attributes. The driver then
handles it exactly as the local run would (an env's error ends its episode; a bad sample id
is the same one-line error).
"""

from __future__ import annotations

import pickle
import traceback
from dataclasses import dataclass, field
from typing import Any


class RemoteTraceback(Exception):
    """The worker-side traceback, chained as the cause of a rebuilt exception."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class PackedError:
    kind: type[BaseException]
    args: tuple[Any, ...]
    state: dict[str, Any] = field(default_factory=dict)
    traceback: str = ""

    def rebuild(self, with_traceback: bool = False) -> BaseException:
        exc = self.kind.__new__(self.kind)
        exc.args = self.args
        exc.__dict__.update(self.state)
        if with_traceback and self.traceback:
            exc.__cause__ = RemoteTraceback(f"\n\n{self.traceback}")
        return exc


def pack_error(exc: BaseException) -> PackedError:
    """`exc` as data the driver can rebuild; a `RuntimeError` with its text if it cannot be
    pickled (a class defined only on the worker, an attribute holding a socket, ...)."""
    text = "".join(traceback.format_exception(exc))
    packed = PackedError(type(exc), exc.args, dict(vars(exc)), text)
    try:
        pickle.loads(pickle.dumps(packed))
    except Exception:
        return PackedError(RuntimeError, (f"{type(exc).__name__}: {exc}",), {}, text)
    return packed
