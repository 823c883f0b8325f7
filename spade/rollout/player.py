"""One lockstep player for every multi-turn episode: suite envs, games, BFCL, ACEBench and
self-play rollouts.

An episode is a `Driver`: it says what to ask next (or that it is over), takes the reply,
and can replay a saved output instead. Each round the player gathers the next request of
every live episode and sends them to their responder in one call (the policy batches
across episodes, a cache sees whole conversations), feeds the replies back and repeats.
Requests addressed to another party (`GenRequest.to`, e.g. ACEBench's simulated user) go to
that party's responder in the same round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from spade.models.policy import Completion
from spade.rollout.requests import POLICY, GenRequest, Responder


class Driver(Protocol):
    """One episode, as the player sees it."""

    key: str
    """The episode's sample id: what its saved output is found under."""

    def start(self) -> None:
        """Set the episode up (start its env, reset it). Called once, before anything else."""
        ...

    def next_request(self) -> GenRequest | None:
        """What to ask next; None once the episode is over."""
        ...

    def feed(self, completion: Completion) -> None:
        """The reply to the last request."""
        ...

    def replay(self, saved: Any) -> None:
        """Play a saved output (predictions mode) to the end, instead of asking anyone."""
        ...

    def close(self) -> None:
        """Release what the episode holds (its sandboxed env). Always called."""
        ...


@runtime_checkable
class Replayer(Protocol):
    """A source of saved outputs (`spade.rollout.replay.Predictions`)."""

    def saved(self, benchmark: str, sample_id: str) -> Any: ...


D = TypeVar("D", bound=Driver)


def play(
    drivers: Sequence[D],
    respond: Responder,
    *,
    phase: str,
    others: Mapping[str, Responder] | None = None,
    on_done: Callable[[D], None] | None = None,
    window: int | None = None,
) -> list[D]:
    """Play every episode to the end; returns the drivers, in order.

    With a `Replayer` as `respond` (saved predictions), each driver replays its saved output
    (found under `phase` and its key) instead. At most `window` episodes are live at once
    (each may hold a sandboxed env); a finished one makes room for the next.
    """
    if isinstance(respond, Replayer):
        for driver in drivers:
            _replay(driver, respond.saved(phase, driver.key), on_done)
        return list(drivers)
    responders = {POLICY: respond, **(others or {})}
    queue = list(drivers)
    queue.reverse()
    live: list[D] = []
    try:
        while queue or live:
            while queue and (window is None or len(live) < window):
                driver = queue.pop()
                live.append(driver)
                driver.start()
            live = _round(live, responders, on_done)
    finally:
        for driver in live:
            driver.close()
    return list(drivers)


def _replay(driver: D, saved: Any, on_done: Callable[[D], None] | None) -> None:
    try:
        driver.start()
        driver.replay(saved)
    finally:
        driver.close()
    if on_done:
        on_done(driver)


def _round(
    live: list[D], responders: Mapping[str, Responder], on_done: Callable[[D], None] | None
) -> list[D]:
    """One round: ask every live episode's next request; returns the episodes still live."""
    asks: dict[str, list[tuple[D, GenRequest]]] = {}
    still: list[D] = []
    for driver in live:
        request = driver.next_request()
        if request is None:
            driver.close()
            if on_done:
                on_done(driver)
            continue
        if request.to not in responders:
            raise ValueError(f"{driver.key}: no responder for party {request.to!r}")
        asks.setdefault(request.to, []).append((driver, request))
        still.append(driver)
    for party, pending in asks.items():
        replies = responders[party]([request for _, request in pending])
        if len(replies) != len(pending):
            raise RuntimeError(f"{party} gave {len(replies)} replies to {len(pending)} requests")
        for (driver, _), reply in zip(pending, replies, strict=True):
            driver.feed(reply[0])
    return still
