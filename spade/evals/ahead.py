"""Requests sent ahead: an lm-eval benchmark's generation started before its turn.

lm-eval benchmarks score on the main thread, one after another (`side_by_side`), so on an
engine that batches concurrent callers their generation would also wait in line. `Ahead`
splits one benchmark's run in two: `fetch` (on a worker thread, as soon as the run starts)
builds the requests lm-eval will make and sends them to the engine beside every other
benchmark's; the run on the main thread then asks `Ahead` itself as its responder, which
answers from what was fetched. What is measured does not change: the requests are lm-eval's
own, built with the same seeds, and any request the run makes that was not fetched (none,
unless lm-eval built different prompts the second time) goes to the engine as before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from spade.evals.benchmark import build_benchmark
from spade.evals.declarations import Declaration
from spade.evals.run import planned_ids
from spade.models.policy import Completion
from spade.rollout import GenRequest, Responder, request_key

_KEY_MODEL = "ahead"
"""Keys here only tell one request from another (the responder knows the model)."""


class Ahead:
    """A responder that answers from replies fetched ahead, and asks `respond` for the rest."""

    def __init__(self, respond: Responder, requests: Callable[[], list[GenRequest]]) -> None:
        self.respond = respond
        self.requests = requests
        """Builds the requests to fetch (run on the fetching thread)."""
        self.fetched: dict[tuple[str, int], list[Completion]] = {}
        self.misses = 0
        """Requests of the run that had not been fetched (answered by `respond`)."""
        self.started: float | None = None
        """time.perf_counter() when the fetch began: a benchmark's time counts from here."""
        self._done = threading.Event()
        self._failure: BaseException | None = None

    def fetch(self) -> None:
        """Build the requests and have them answered; a failure is raised to the run."""
        self.started = time.perf_counter()
        try:
            requests = self.requests()
            answers = self.respond(requests)
            self.fetched = {_key(r): a for r, a in zip(requests, answers, strict=True)}
        except BaseException as exc:  # the run on the main thread raises it
            self._failure = exc
        finally:
            self._done.set()

    def ready(self) -> None:
        """Wait until the fetch is done (raising its failure). The run must call this before
        it starts: lm-eval's run holds the process's lm-eval lock, which the fetch needs to
        build its requests, so waiting inside the run would wait forever."""
        self._done.wait()
        if self._failure is not None:
            raise self._failure

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[Completion]]:
        self.ready()
        keys = [_key(r) for r in requests]
        missing = [(k, r) for k, r in zip(keys, requests, strict=True) if k not in self.fetched]
        self.misses += len(missing)
        answers = self.respond([r for _, r in missing]) if missing else []
        answered = dict(zip([k for k, _ in missing], answers, strict=True))
        return [self.fetched[k] if k in self.fetched else answered[k] for k in keys]


def ahead_of(
    declaration: Declaration,
    respond: Responder,
    data_dir: Path | None,
    ids: list[str] | None,
    preset: str | None,
    limit: int | None,
) -> Ahead | None:
    """An `Ahead` for a benchmark that can build its requests before it runs (lm-eval's), on
    the ids `run_benchmark` will choose; None for any other benchmark."""
    benchmark = build_benchmark(declaration)
    build = getattr(benchmark, "requests", None)
    if build is None:
        return None
    _import_transformers()

    def requests() -> list[GenRequest]:
        # The same benchmark picks the ids and builds the requests: one lm-eval catalog.
        chosen = planned_ids(declaration, data_dir, ids, preset, limit, benchmark)
        return list(build(chosen, data_dir))

    return Ahead(respond, requests)


def _import_transformers() -> None:
    """Import transformers here, on the main thread, before any fetch starts. datasets'
    pickler (which fingerprints lm-eval's dataset maps on the fetching threads) reads
    `transformers.PreTrainedTokenizerBase` as soon as "transformers" is in `sys.modules`;
    while another thread is still importing it the attribute is missing, and a run failed
    with that AttributeError once in a cold main command."""
    import transformers  # noqa: F401  (for its side effect: a fully imported module)


def _key(request: GenRequest) -> tuple[str, int]:
    return request_key(_KEY_MODEL, request, 0), request.n
