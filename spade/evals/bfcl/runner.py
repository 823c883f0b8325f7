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
from typing import TYPE_CHECKING, Literal

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
from spade.evals.responders import PredictionsResponder
from spade.evals.samples import ProgressCallback, Responder, SampleResult

if TYPE_CHECKING:
    from spade.evals.bfcl.episode import Episode

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
        with BackendWorker(
            self.options.backend_timeout_s, self.options.backend_memory_mb
        ) as worker:
            if isinstance(respond, PredictionsResponder):
                results = self._score_saved(chosen, respond, worker, weights, progress)
            else:
                results = self._play(chosen, respond, worker, weights, progress)
        return [results[i] for i in ids]

    def _score_saved(
        self,
        chosen: list[BfclEntry],
        respond: PredictionsResponder,
        worker: BackendWorker,
        weights: dict[str, float],
        progress: ProgressCallback | None,
    ) -> dict[str, SampleResult]:
        results = {}
        for entry in chosen:
            saved = respond.saved(self.declaration.name, entry.id)
            normalised = normalise(saved)
            verdict = score_output(worker, entry, normalised.decoded)
            extra = {"malformed": normalised.malformed, "undecodable": normalised.undecodable}
            results[entry.id] = sample_result(
                self.declaration.name, entry, weights[entry.category], verdict,
                prompt=entry.question, output=saved, answer=normalised.decoded,
                parsed=normalised.decoded is not None and not normalised.malformed, extra=extra,
            )  # fmt: skip
            if progress is not None:
                progress(1)
        return results

    def _play(
        self,
        chosen: list[BfclEntry],
        respond: Responder,
        worker: BackendWorker,
        weights: dict[str, float],
        progress: ProgressCallback | None,
    ) -> dict[str, SampleResult]:
        # Imported here, not at the top: the prompts import bfcl-eval, and a missing bfcl-eval
        # should surface as the constructor's DeclarationError (with the install command).
        from spade.evals.bfcl.episode import Episode

        settings = self.declaration.generation.settings()
        episodes = [Episode(e, self.options.mode, self.declaration.name, settings) for e in chosen]
        sessions = {e.entry.id: BackendSession(worker, e.entry) for e in episodes}
        results: dict[str, SampleResult] = {}
        active = episodes
        while active:
            replies = respond([episode.request() for episode in active])
            for episode, texts in zip(active, replies, strict=True):
                calls = episode.reply(texts[0])
                if calls is not None:
                    episode.results(calls, sessions[episode.entry.id].execute(calls))
                if episode.done:
                    sessions[episode.entry.id].close()
                    results[episode.entry.id] = self._played_result(episode, worker, weights)
                    if progress is not None:
                        progress(1)
            active = [episode for episode in active if not episode.done]
        return results

    def _played_result(
        self, episode: Episode, worker: BackendWorker, weights: dict[str, float]
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
            self.declaration.name, entry, weights[entry.category], verdict,
            prompt=episode.messages, output=episode.output, answer=episode.output,
            parsed=made_calls or not any(entry.ground_truth), extra=extra,
        )  # fmt: skip
