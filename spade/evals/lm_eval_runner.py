"""The `lm_eval` runner: lm-eval's own tasks, prompts, filters and metrics, run through
lm-eval's Python API with spade's responder as the model.

Flow: render the declaration's task template (`lm_eval_tasks`), map SAMPLE_IDs to lm-eval
doc indices, run `lm_eval.simple_evaluate` with `samples=` restricted to those docs and a
`ResponderLM` (`lm_eval_bridge`), then turn lm-eval's logged samples into `SampleResult`s:
every per-sample metric lm-eval computed, under every filter, as `metric,filter`. Each doc's
scoring (the task's `process_results`) is retried when its alarm cut it short
(`scoring_alarms`), and a doc still cut short is marked `timed_out`.
"""

from __future__ import annotations

import random
import tempfile
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spade.evals.benchmark import check_known_ids
from spade.evals.declarations import Declaration, DeclarationError
from spade.evals.lm_eval_answers import read_answer
from spade.evals.lm_eval_bridge import ResponderLM, decode_chat
from spade.evals.lm_eval_tasks import DocRef, LmEvalOptions, catalog, parse_options, render_tasks
from spade.evals.samples import ProgressCallback, SampleResult
from spade.evals.scoring_alarms import Scored, score_with_retries
from spade.models.policy import Completion
from spade.rollout import GenRequest, Responder

if TYPE_CHECKING:
    from lm_eval.api.task import Task
    from lm_eval.tasks import TaskManager

ProcessResults = Callable[[dict[str, Any], list[Any]], dict[str, Any]]
Scoring = dict[int, Scored[dict[str, Any]]]
"""How each doc's scoring went, by the doc's id(): lm-eval logs the very dict it handed to
`process_results` (one per doc and filter), and the logged samples keep it alive."""


class LmEvalBenchmark:
    """A declared benchmark run by lm-eval (`runner: lm_eval`)."""

    def __init__(self, declaration: Declaration) -> None:
        self.declaration = declaration
        self.options: LmEvalOptions = parse_options(declaration)
        self._catalogs: dict[Path | None, list[DocRef]] = {}

    def sample_ids(self, data_dir: Path | None) -> list[str]:
        return [ref.sample_id for ref in self._catalog(data_dir)]

    def run(
        self,
        ids: list[str],
        respond: Responder,
        data_dir: Path | None,
        progress: ProgressCallback | None = None,
    ) -> list[SampleResult]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        refs = self._lookup(wanted, data_dir)
        logged, model, scoring = self._simple(refs, respond, data_dir)
        if progress is not None:
            progress(len(wanted))
        results = {r.sample_id: r for r in self._results(logged, model, refs, scoring)}
        return [results[sample_id] for sample_id in wanted]

    def requests(self, ids: list[str], data_dir: Path | None) -> list[GenRequest]:
        """The generation requests `run(ids, ...)` makes, built by lm-eval exactly as there
        (same seeds, same prompts) but neither answered nor scored: what a run can send to
        the engine ahead of its turn on the main thread (`spade.evals.ahead`)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        collected: list[GenRequest] = []

        def collect(requests: Sequence[GenRequest]) -> list[list[Completion]]:
            collected.extend(requests)
            raise _Collected

        with suppress(_Collected):
            self._simple(self._lookup(wanted, data_dir), collect, data_dir)
        return collected

    # -- lm-eval ---------------------------------------------------------------------------
    def _simple(
        self, refs: dict[str, DocRef], respond: Responder, data_dir: Path | None
    ) -> tuple[dict[str, list[dict[str, Any]]], ResponderLM, Scoring]:
        """lm-eval's run of the docs `refs`: its logged samples, the model, how scoring went.
        One at a time in the process: lm-eval reseeds the global generators, and task loading
        draws from them (GPQA shuffles its options), so two runs at once could change each
        other's prompts."""
        with (
            _LM_EVAL,
            _global_rngs_kept(),
            _scratch() as tmp,
        ):
            task_set = render_tasks(self.declaration, self.options, data_dir, Path(tmp))
            # Positions follow dataset order: lm-eval numbers the selected docs in that order.
            by_task: dict[str, list[DocRef]] = defaultdict(list)
            for ref in sorted(refs.values(), key=lambda r: (r.task, r.index)):
                by_task[ref.task].append(ref)
            sample_ids = {
                (task, position): ref.sample_id
                for task, chosen in by_task.items()
                for position, ref in enumerate(chosen)
            }
            sampling = self.declaration.generation.sampling()
            model = ResponderLM(respond, self.declaration.name, sampling, sample_ids)
            scoring: Scoring = {}
            logged = self._evaluate(model, task_set.task_manager(), by_task, scoring)
        return logged, model, scoring

    def _evaluate(
        self,
        model: ResponderLM,
        task_manager: TaskManager,
        by_task: dict[str, list[DocRef]],
        scoring: Scoring,
    ) -> dict[str, list[dict[str, Any]]]:
        import lm_eval

        tasks: list[str | dict[str, Any] | Task] = []
        for task in task_manager.load(list(by_task))["tasks"].values():
            task.process_results = _retried(task.process_results, scoring)  # type: ignore[method-assign]
            tasks.append(task)
        # The declared generation budget is in the rendered task configs (lm_eval_tasks).
        output = lm_eval.simple_evaluate(
            model=model,
            tasks=tasks,
            task_manager=task_manager,
            samples={task: [ref.index for ref in chosen] for task, chosen in by_task.items()},
            apply_chat_template=True,
            fewshot_as_multiturn=self.options.fewshot_as_multiturn,
            system_instruction=self.options.system_instruction,
            bootstrap_iters=0,  # we compute confidence intervals ourselves
            log_samples=True,
        )
        if output is None:
            raise RuntimeError("lm-eval returned no results")
        samples: dict[str, list[dict[str, Any]]] = output["samples"]
        return samples

    # -- records -----------------------------------------------------------------------------
    def _results(
        self,
        logged: dict[str, list[dict[str, Any]]],
        model: ResponderLM,
        refs: dict[str, DocRef],
        scoring: Scoring,
    ) -> list[SampleResult]:
        """One SampleResult per doc from lm-eval's logged samples (one per doc and filter)."""
        by_doc: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
        for task, entries in logged.items():
            for entry in entries:
                by_doc[(task, int(entry["doc_id"]))].append(entry)
        return [
            self._result(ref, by_doc[(ref.task, ref.index)], model, scoring)
            for ref in refs.values()
        ]

    def _result(
        self, ref: DocRef, entries: list[dict[str, Any]], model: ResponderLM, scoring: Scoring
    ) -> SampleResult:
        if not entries:
            raise RuntimeError(f"{self.declaration.name}: lm-eval logged nothing for {ref}")
        primary_filter = self.declaration.primary.partition(",")[2]
        metrics: dict[str, float] = {}
        filtered: dict[str, Any] = {}
        for entry in entries:
            filtered[entry["filter"]] = entry["filtered_resps"][0]
            for metric in entry["metrics"]:
                metrics[f"{metric},{entry['filter']}"] = float(entry[metric])
        if self.declaration.primary not in metrics:
            raise DeclarationError(
                f"{self.declaration.name}: primary metric {self.declaration.primary!r} is not "
                f"one lm-eval computes here; it computes {', '.join(sorted(metrics))}"
            )
        first = entries[0]
        output = first["resps"][0][0]
        answer = read_answer(
            self.options.answer, output, filtered.get(primary_filter), self.options.invalid_answers
        )
        raw = model.raw_outputs.get(ref.sample_id)
        extra: dict[str, Any] = {
            "task": ref.task,
            "doc_id": ref.index,
            "filtered": filtered,
            "doc_hash": first.get("doc_hash"),
            "prompt_hash": first.get("prompt_hash"),
        }
        if raw is not None and raw != output:
            extra["raw_output"] = raw  # the text before the cut at lm-eval's stop sequences
        attempts = [scoring[id(entry["doc"])] for entry in entries]
        return SampleResult(
            benchmark=self.declaration.name,
            sample_id=ref.sample_id,
            prompt=list(decode_chat(first["arguments"][0][0])),
            output=output,
            answer=answer,
            target=first["target"],
            score=metrics[self.declaration.primary],
            metrics=metrics,
            parsed=answer is not None,
            extra=extra,
            timed_out=any(scored.timed_out for scored in attempts),
            scoring_retries=sum(scored.retries for scored in attempts),
        )

    # -- ids -------------------------------------------------------------------------------
    def _catalog(self, data_dir: Path | None) -> list[DocRef]:
        if data_dir not in self._catalogs:
            with (
                _LM_EVAL,
                _global_rngs_kept(),
                _scratch() as tmp,
            ):
                task_set = render_tasks(self.declaration, self.options, data_dir, Path(tmp))
                try:
                    self._catalogs[data_dir] = catalog(task_set, self.options)
                except Exception as exc:  # datasets raises many kinds for an unreachable hub
                    if data_dir is not None or isinstance(exc, DeclarationError):
                        raise
                    raise DeclarationError(self._hub_hint(exc)) from exc
        return self._catalogs[data_dir]

    def _hub_hint(self, exc: Exception) -> str:
        source = self.declaration.hub.path if self.declaration.hub else "lm-eval's source"
        files = [d.path for d in self.declaration.data] + self.options.local_files
        return (
            f"{self.declaration.name}: cannot load {source} from the Hugging Face hub "
            f"({type(exc).__name__}: {exc}); pass --data-dir with {', '.join(files)}"
        )

    def _lookup(self, ids: list[str], data_dir: Path | None) -> dict[str, DocRef]:
        known = {ref.sample_id: ref for ref in self._catalog(data_dir)}
        check_known_ids(self.declaration.name, ids, known)
        return {i: known[i] for i in ids}


class _Collected(Exception):  # noqa: N818 (a signal, not an error)
    """Raised by `requests`' collector once lm-eval has handed it the requests."""


_LM_EVAL = threading.RLock()
"""Held by every lm-eval run and task loading in the process (see `LmEvalBenchmark._simple`)."""


def _retried(process_results: ProcessResults, scoring: Scoring) -> ProcessResults:
    """A task's `process_results`, retried while its alarms cut it short (`scoring_alarms`)."""

    def scored(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        attempts = score_with_retries(lambda: process_results(doc, results))
        scoring[id(doc)] = attempts
        return attempts.value

    return scored


@contextmanager
def _global_rngs_kept() -> Iterator[None]:
    """simple_evaluate reseeds Python's, NumPy's and torch's global generators (for its own
    reproducibility) and task loading may draw from them (GPQA shuffles its options); put
    them back so a benchmark run leaves the caller's generators alone."""
    import numpy as np
    import torch

    python, numpy, torch_state = random.getstate(), np.random.get_state(), torch.get_rng_state()
    try:
        yield
    finally:
        random.setstate(python)
        np.random.set_state(numpy)
        torch.set_rng_state(torch_state)


def _scratch() -> tempfile.TemporaryDirectory[str]:
    """The rendered tasks' folder. Cleanup errors are ignored: when another benchmark fails
    and the process exits while this one's thread still writes here, the interpreter's
    final cleanup would otherwise print a traceback after the one-line error."""
    return tempfile.TemporaryDirectory(prefix="spade-lm-eval-", ignore_cleanup_errors=True)
