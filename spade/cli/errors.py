"""One-line errors for bad input: no tracebacks for the user's mistakes."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import NoReturn

from spade.sandbox import SandboxUnavailable

USAGE_ERROR = 2


class UsageError(Exception):
    """Bad input from the user (a missing file, an unknown name): exit 2 with one line."""


def fail(message: str, code: int = USAGE_ERROR) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(code)


def one_line_errors(prog: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Turn `UsageError`, `SandboxUnavailable` (no sandbox can run generated code here) and a
    Ctrl-C into a one-line message and exit status; output piped into a reader that stops
    early (`| head`) ends the command quietly, as `cat` does."""

    def decorate(main: Callable[..., int]) -> Callable[..., int]:
        @wraps(main)
        def run(*args: object, **kwargs: object) -> int:
            try:
                return main(*args, **kwargs)
            except (UsageError, SandboxUnavailable) as exc:
                fail(f"{prog}: {exc}")
            except KeyboardInterrupt:
                fail(f"{prog}: interrupted", 130)
            except BrokenPipeError:
                # The reader is gone: send what is left to /dev/null so the flush at exit
                # cannot raise again, and exit as a process killed by SIGPIPE would.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                raise SystemExit(128 + 13) from None

        return run

    return decorate


@contextmanager
def writing_to(out: Path) -> Iterator[None]:
    """Refuse an `--out` that is a folder; an OSError inside the block is one line naming it."""
    if out.is_dir():
        raise UsageError(f"--out {out} is a directory; give a file name")
    try:
        yield
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
