"""The policy responder: a policy behind the completion cache, batched."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace

from spade.models.policy import Completion, Policy, Prompt, SamplingParams, TokenPrompt
from spade.rollout.cache import CompletionCache, request_key
from spade.rollout.chains import Chains
from spade.rollout.requests import GenRequest


class PolicyResponder:
    """Generates with a policy; every draw is looked up in (and added to) the cache.

    Callable from several threads when the policy is (`concurrent_callers`): the cache and the
    token counts are shared under locks.
    """

    def __init__(
        self,
        policy: Policy,
        model_key: str,
        cache: CompletionCache | None = None,
        batch_size: int = 8,
        chains: Chains | None = None,
    ) -> None:
        self.policy = policy
        self.model_key = model_key
        self.cache = cache
        self.batch_size = batch_size
        self.chains = chains
        """Where each sample's chain of calls is counted (the run's critical path), if kept."""
        self.generated_tokens = 0
        self.prompt_tokens = 0
        self._counts = threading.Lock()

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[Completion]]:
        started = time.perf_counter()
        answered = self._answer(requests)
        if self.chains is not None:
            self.chains.record(requests, started, time.perf_counter())
        return answered

    def _answer(self, requests: Sequence[GenRequest]) -> list[list[Completion]]:
        draws = [(r, d, request_key(self.model_key, r, d)) for r in requests for d in range(r.n)]
        known = self.cache.get_many([key for _, _, key in draws]) if self.cache else {}
        missing = [(r, d, key) for r, d, key in draws if key not in known]
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            made = list(zip([key for _, _, key in batch], self._generate(batch), strict=True))
            known.update(made)
            if self.cache:
                self.cache.put_many(made)
        return [[known[request_key(self.model_key, r, d)] for d in range(r.n)] for r in requests]

    def _generate(self, batch: list[tuple[GenRequest, int, str]]) -> list[Completion]:
        # Requests in a batch may differ in settings; group so each call has one SamplingParams.
        made: dict[int, Completion] = {}
        groups: dict[SamplingParams, list[int]] = {}
        for index, (request, draw, _) in enumerate(batch):
            groups.setdefault(_draw_sampling(request.sampling, draw), []).append(index)
        for sampling, indices in groups.items():
            prompts = [_prompt(batch[i][0]) for i in indices]
            tools = [list(t) if (t := batch[i][0].tools) else None for i in indices]
            completions = self.policy.generate(prompts, sampling, tools)
            for i, completion in zip(indices, completions, strict=True):
                made[i] = completion
            with self._counts:
                self.generated_tokens += sum(c.completion_tokens for c in completions)
                self.prompt_tokens += sum(c.prompt_tokens for c in completions)
        return [made[i] for i in range(len(batch))]


def _draw_sampling(sampling: SamplingParams, draw: int) -> SamplingParams:
    """Draw d of a request samples with seed + d (an unseeded request stays unseeded)."""
    return sampling if sampling.seed is None else replace(sampling, seed=sampling.seed + draw)


def _prompt(request: GenRequest) -> Prompt:
    if request.prompt_ids is not None:
        return TokenPrompt(request.prompt_ids)
    return [dict(m) for m in request.messages]
