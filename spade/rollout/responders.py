"""Responders: a policy behind the completion cache, or saved predictions replayed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from spade.evals.cache import CompletionCache, request_key
from spade.evals.samples import GenRequest
from spade.models import Policy, SamplingParams


class PredictionsError(ValueError):
    """A predictions file is unreadable, malformed, or lacks a requested sample."""


class PolicyResponder:
    """Generates with a policy; every draw is looked up in (and added to) the cache."""

    def __init__(
        self,
        policy: Policy,
        model_key: str,
        cache: CompletionCache | None = None,
        batch_size: int = 8,
    ) -> None:
        self.policy = policy
        self.model_key = model_key
        self.cache = cache
        self.batch_size = batch_size
        self.generated_tokens = 0
        self.prompt_tokens = 0

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[str]]:
        draws = [(r, d, request_key(self.model_key, r, d)) for r in requests
                 for d in range(r.settings.n)]  # fmt: skip
        known = self.cache.get_many([key for _, _, key in draws]) if self.cache else {}
        missing = [(r, d, key) for r, d, key in draws if key not in known]
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            texts = self._generate(batch)
            known.update(zip([key for _, _, key in batch], texts, strict=True))
            if self.cache:
                self.cache.put_many(zip([key for _, _, key in batch], texts, strict=True))
        return [[known[request_key(self.model_key, r, d)] for d in range(r.settings.n)]
                for r in requests]  # fmt: skip

    def _generate(self, batch: list[tuple[GenRequest, int, str]]) -> list[str]:
        # Requests in a batch may differ in settings; group so each call has one SamplingParams.
        texts: dict[int, str] = {}
        groups: dict[Any, list[int]] = {}
        for index, (request, draw, _) in enumerate(batch):
            groups.setdefault((request.settings, draw), []).append(index)
        for (settings, draw), indices in groups.items():
            sampling = SamplingParams(
                max_new_tokens=settings.max_gen_toks,
                temperature=settings.temperature,
                top_p=settings.top_p,
                stop=settings.stop,
                seed=settings.seed + draw,
            )
            conversations = [list(batch[i][0].messages) for i in indices]
            tools = [list(t) if (t := batch[i][0].tools) else None for i in indices]
            completions = self.policy.generate(conversations, sampling, tools)
            for i, completion in zip(indices, completions, strict=True):
                texts[i] = completion.text
                self.generated_tokens += completion.completion_tokens
                self.prompt_tokens += completion.prompt_tokens
        return [texts[i] for i in range(len(batch))]


class PredictionsResponder:
    """Replays saved outputs: `{"benchmark": NAME, "id": SAMPLE_ID, "output": ...}` lines."""

    def __init__(self, predictions: dict[str, dict[str, Any]]) -> None:
        self.predictions = predictions

    @classmethod
    def from_file(cls, path: Path) -> PredictionsResponder:
        return cls(read_predictions(path))

    def ids(self, benchmark: str) -> list[str]:
        return list(self.predictions.get(benchmark, {}))

    def saved(self, benchmark: str, sample_id: str) -> Any:
        """The saved output itself, for benchmarks whose outputs are not one text per prompt
        (multi-turn tool use: a list of turns of steps of calls; games: the list of moves)."""
        saved = self.predictions.get(benchmark, {})
        if sample_id not in saved:
            raise PredictionsError(f"no prediction for {benchmark} sample {sample_id!r}")
        return saved[sample_id]

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[str]]:
        answers = []
        for request in requests:
            saved = self.predictions.get(request.benchmark, {})
            if request.sample_id not in saved:
                raise PredictionsError(
                    f"no prediction for {request.benchmark} sample {request.sample_id!r}"
                )
            output = saved[request.sample_id]
            answers.append(output if _is_text_list(output) else [output])
        return answers


def _is_text_list(output: Any) -> bool:
    return isinstance(output, list) and all(isinstance(o, str) for o in output) and bool(output)


def read_predictions(path: Path) -> dict[str, dict[str, Any]]:
    """Parse a predictions JSONL file; errors name the file and line."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise PredictionsError(f"{path}: cannot read ({exc.strerror})") from None
    found: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise PredictionsError(f"{path}:{number}: not JSON ({exc})") from None
        if not isinstance(record, dict) or not {"benchmark", "id", "output"} <= record.keys():
            raise PredictionsError(f'{path}:{number}: need "benchmark", "id" and "output"')
        benchmark, sample_id = str(record["benchmark"]), str(record["id"])
        if sample_id in found.setdefault(benchmark, {}):
            raise PredictionsError(f"{path}:{number}: duplicate {benchmark} id {sample_id!r}")
        found[benchmark][sample_id] = record["output"]
    if not found:
        raise PredictionsError(f"{path}: no predictions")
    return found
