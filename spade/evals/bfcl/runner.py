"""The `bfcl` runner: BFCL v4 multi-turn, played and scored as bfcl-eval does.

Samples are BFCL entries (`multi_turn_base_0`, ...), from the categories in `options`.
With a model: every active entry is stepped in lockstep (one `respond` call per round, for
batching and the completion cache) through `Episode`, its calls executed in the backend
worker. With saved predictions: the outputs are scored directly. Either way an entry passes
when bfcl-eval's checker accepts every turn (see `scoring.py`).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from spade.evals.benchmark import check_known_ids, seeded_slice
from spade.evals.bfcl.data import (
    INSTALL_HINT,
    BfclEntry,
    category_of,
    data_folder,
    load_entries,
)
from spade.evals.bfcl.executor import BackendSession, BackendWorker
from spade.evals.bfcl.records import category_weights, sample_result
from spade.evals.bfcl.scoring import normalise, score_output
from spade.evals.declarations import Declaration, DeclarationError
from spade.evals.samples import ProgressCallback, SampleResult
from spade.models.policy import Completion, SamplingParams
from spade.rollout import GenRequest, Responder, play

if TYPE_CHECKING:
    from spade.evals.bfcl.episode import Episode, Mode

Category = Literal["base", "miss_func", "miss_param", "long_context"]


class BfclOptions(BaseModel):
    """The `options:` of a `runner: bfcl` declaration."""

    model_config = ConfigDict(extra="forbid")

    categories: list[Category] = Field(description="BFCL multi-turn categories, in this order")
    mode: Literal["prompting", "function_calling"] = Field(
        "prompting", description="calls as `[f(a=1)]` text, or the chat template's tool calls"
    )
    backend_timeout_s: float = Field(
        30.0, gt=0, description="deadline of one step's calls (or one entry's scoring)"
    )
    backend_memory_mb: int = Field(4096, ge=256, description="address-space limit of the worker")


class BfclBenchmark:
    """A declared BFCL multi-turn benchmark (`runner: bfcl`)."""

    def __init__(self, declaration: Declaration) -> None:
        self.declaration = declaration
        where = declaration.source_file or declaration.name
        self.options = declaration.typed_options(BfclOptions)
        if declaration.generation.n != 1:
            raise DeclarationError(f"{where}: generation.n must be 1 for multi-turn tool use")
        try:
            import bfcl_eval.constants.default_prompts  # noqa: F401 — fail early, with the fix
        except ImportError:
            raise DeclarationError(
                f"{where}: the bfcl runner needs bfcl-eval: {INSTALL_HINT}"
            ) from None
        self._entries: dict[Path | None, dict[str, BfclEntry]] = {}

    # -- data ------------------------------------------------------------------------------
    def entries(self, data_dir: Path | None) -> dict[str, BfclEntry]:
        if data_dir not in self._entries:
            folder = data_folder(self.declaration, data_dir)
            self._entries[data_dir] = load_entries(folder, self.options.categories)
        return self._entries[data_dir]

    def sample_ids(self, data_dir: Path | None) -> list[str]:
        return list(self.entries(data_dir))

    def slice_ids(self, ids: list[str], size: int | None, seed: int) -> list[str]:
        """A seeded slice with an equal share of every category (earlier categories take the
        remainder), kept in dataset order. Each category draws with its own seed: one seed
        would pick the same positions in every category, and BFCL's categories are
        variants of the same tasks, position for position."""
        if size is None or size >= len(ids):
            return list(ids)
        by_category: dict[str, list[str]] = defaultdict(list)
        for sample_id in ids:
            by_category[category_of(sample_id)].append(sample_id)
        share, remainder = divmod(size, len(by_category))
        chosen: set[str] = set()
        for index, members in enumerate(by_category.values()):
            chosen.update(seeded_slice(members, share + (index < remainder), seed + index))
        return [sample_id for sample_id in ids if sample_id in chosen]

    # -- run -------------------------------------------------------------------------------
    def run(
        self,
        ids: list[str],
        respond: Responder,
        data_dir: Path | None,
        progress: ProgressCallback | None = None,
    ) -> list[SampleResult]:
        entries = self.entries(data_dir)
        categories = ", ".join(self.options.categories)
        check_known_ids(self.declaration.name, ids, entries, f"; categories {categories}")
        chosen = [entries[i] for i in dict.fromkeys(ids)]
        if not chosen:
            return []
        weights = category_weights([e.id for e in chosen])
        name = self.declaration.name
        sampling = self.declaration.generation.sampling()
        with BackendWorker(
            self.options.backend_timeout_s, self.options.backend_memory_mb
        ) as worker:
            drivers = [BfclDriver(e, self.options.mode, name, sampling, worker) for e in chosen]
            play(
                drivers, respond, phase=name, on_done=(lambda _: progress(1)) if progress else None
            )
            results = {}
            for driver in drivers:
                weight = weights[driver.entry.category]
                if driver.episode is not None:
                    results[driver.key] = self._played_result(driver.episode, worker, weight)
                else:
                    results[driver.key] = self._saved_result(driver, worker, weight)
        return [results[i] for i in ids]

    def _saved_result(
        self, driver: BfclDriver, worker: BackendWorker, weight: float
    ) -> SampleResult:
        entry, saved = driver.entry, driver.saved
        normalised = normalise(saved)
        verdict = score_output(worker, entry, normalised.decoded)
        extra = {"malformed": normalised.malformed, "undecodable": normalised.undecodable}
        return sample_result(
            self.declaration.name,
            entry,
            weight,
            verdict,
            prompt=entry.question,
            output=saved,
            answer=normalised.decoded,
            parsed=normalised.decoded is not None and not normalised.malformed,
            extra=extra,
        )

    def _played_result(
        self, episode: Episode, worker: BackendWorker, weight: float
    ) -> SampleResult:
        entry = episode.entry
        verdict = score_output(worker, entry, episode.output)
        made_calls = any(turn for turn in episode.output)
        extra = {
            "mode": episode.mode,
            "force_quit": episode.force_quit,
            "steps": [len(turn) for turn in episode.output],
            "replies": episode.replies,
            "decode_errors": episode.decode_errors,
            "call_errors": episode.call_errors,
        }
        return sample_result(
            self.declaration.name,
            entry,
            weight,
            verdict,
            prompt=episode.messages,
            output=episode.output,
            answer=episode.output,
            parsed=made_calls or not any(entry.ground_truth),
            extra=extra,
        )


class BfclDriver:
    """One BFCL entry as a `spade.rollout.Driver`: each model reply is decoded, its calls run
    on the entry's backends (in the worker) and their results join the conversation."""

    def __init__(
        self,
        entry: BfclEntry,
        mode: Mode,
        phase: str,
        sampling: SamplingParams,
        worker: BackendWorker,
    ) -> None:
        self.key = entry.id
        self.entry = entry
        self.mode = mode
        self.phase = phase
        self.sampling = sampling
        self.worker = worker
        self.episode: Episode | None = None
        """The played episode (None when the saved output was replayed instead)."""
        self.saved: Any = None
        self._session: BackendSession | None = None

    def start(self) -> None:
        pass

    def next_request(self) -> GenRequest | None:
        if self.episode is None:
            # Imported here: the prompts import bfcl-eval, and a missing bfcl-eval surfaces as
            # the benchmark constructor's DeclarationError (with the install command).
            from spade.evals.bfcl.episode import Episode

            self.episode = Episode(self.entry, self.mode, self.phase, self.sampling)
            self._session = BackendSession(self.worker, self.entry)
        return None if self.episode.done else self.episode.request()

    def feed(self, completion: Completion) -> None:
        assert self.episode is not None and self._session is not None
        calls = self.episode.reply(completion.text)
        if calls is not None:
            self.episode.results(calls, self._session.execute(calls))

    def replay(self, saved: Any) -> None:
        """A saved output is scored as it is (no calls are re-run to produce it)."""
        self.saved = saved

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
