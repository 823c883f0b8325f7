"""Scoring cut short by its alarm: noticed, retried with a longer limit, and counted.

math_verify and lm-eval's minerva_math bound every parse and comparison with `SIGALRM`
(5 s); when the alarm fires they swallow the timeout and the comparison is simply false, so
on a loaded machine a right answer can score 0 (MATH-500's test/precalculus/807.json did: it
is scored first, and a process's first parse takes ~0.5 s quiet, the next ones < 1 ms).
`score_with_retries` runs a scorer while watching
`SIGALRM`: the handlers the scorer installs are wrapped to note that they fired, and
`signal.alarm` is scaled. An attempt during which an alarm fired is run again with every
limit multiplied by the next of `RETRY_SCALES`; the last attempt's value stands, and when
that one was cut short too the sample is reported as a scoring timeout.

Alarms are main-thread only, like the scorers themselves (see `side_by_side`); the patched
functions are put back after every attempt.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any, Generic, TypeVar

T = TypeVar("T")

RETRY_SCALES: tuple[int, ...] = (4,)
"""Each retry's limits as multiples of the scorer's own: one retry at 4x (20 s for lm-eval's
5 s). A sample still cut short at 4x is counted rather than retried on: a pathological output
would otherwise cost minutes of sympy per attempt."""

Handler = Callable[[int, FrameType | None], Any]


@dataclass(frozen=True)
class Scored(Generic[T]):
    value: T
    """What the last attempt returned."""
    retries: int
    """Attempts after the first (each because an alarm fired during the one before)."""
    timed_out: bool
    """An alarm fired during the last attempt too: the value may be a timeout's false 0."""


def score_with_retries(score: Callable[[], T], scales: Sequence[int] = RETRY_SCALES) -> Scored[T]:
    """Run `score`; while an alarm fires during it, run it again with longer alarms."""
    for retries, scale in enumerate((1, *scales)):
        with _watched_alarms(scale) as fired:
            value = score()
        if not fired:
            return Scored(value, retries, timed_out=False)
    return Scored(value, len(scales), timed_out=True)


@contextmanager
def _watched_alarms(scale: int) -> Iterator[list[int]]:
    """Within: every SIGALRM handler installed counts its firings into the list yielded, and
    `signal.alarm(n)` sets an alarm of `n * scale` seconds."""
    fired: list[int] = []
    install, alarm = signal.signal, signal.alarm
    before = signal.getsignal(signal.SIGALRM)
    counting: set[Any] = set()

    def watch(handler: Handler) -> Handler:
        def noted(signum: int, frame: FrameType | None) -> Any:
            fired.append(signum)
            return handler(signum, frame)

        counting.add(noted)
        return noted

    def install_watched(signum: int, handler: Any) -> Any:
        # A scorer that puts back the handler it found may hand us one of ours again.
        if signum == signal.SIGALRM and callable(handler) and handler not in counting:
            handler = watch(handler)
        return install(signum, handler)

    signal.signal = install_watched  # type: ignore[assignment]
    signal.alarm = lambda seconds: alarm(seconds * scale)
    try:
        yield fired
    finally:
        signal.signal, signal.alarm = install, alarm
        # minerva_math leaves its handler installed. Unchanged off the main thread, where no
        # handler can be set; None: one not set from Python, which cannot be put back.
        if before is not None and signal.getsignal(signal.SIGALRM) is not before:
            install(signal.SIGALRM, before)
