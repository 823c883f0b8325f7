"""The simulated user of multi_turn entries: a model of its own, not the checkpoint under test.

Scores depend on the user model, so its identity is recorded with every sample; compare
multi_turn scores only between runs with the same user. The responder is built on first use
(`load_policy` + `PolicyResponder` + the shared completion cache), so a run that needs no
user (multi_step only, saved predictions) loads no second model; tests pass their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spade.evals.declarations import DeclarationError
from spade.models.policy import Completion, SamplingParams
from spade.rollout import GenRequest, Responder


class UserSimulator:
    def __init__(
        self,
        spec: str,
        settings: SamplingParams,
        respond: Responder | None = None,
        batch_size: int = 8,
    ) -> None:
        self.spec = spec
        self.settings = settings
        self.batch_size = batch_size
        self._respond = respond
        self._identity: dict[str, Any] = {"spec": spec}
        if respond is not None:
            self._identity["backend"] = "given"

    def request(self, benchmark: str, sample_id: str, messages: Sequence[Any]) -> GenRequest:
        return GenRequest(benchmark, sample_id, tuple(messages), self.settings)

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[Completion]]:
        """A `Responder` for the user's turns (built on first use)."""
        if not requests:
            return []
        return self.responder()(requests)

    def responder(self) -> Responder:
        if self._respond is None:
            self._respond = self._build()
        return self._respond

    def describe(self) -> dict[str, Any]:
        """What plays the user: the spec, and once loaded the backend, model and weights hash."""
        return dict(self._identity)

    def _build(self) -> Responder:
        from spade.models import ModelSpecError, load_policy, spade_cache_dir
        from spade.rollout import CompletionCache, PolicyResponder

        try:
            policy = load_policy(self.spec, batch_size=self.batch_size)
        except ModelSpecError as exc:
            raise DeclarationError(f"acebench options.user_model: {exc}") from None
        info = policy.describe()
        self._identity.update(
            backend=info.backend,
            model=info.model,
            weights_sha256=info.weights_sha256,
            endpoint=info.endpoint,
        )
        model_key = info.weights_sha256 or f"{info.backend}:{info.model}@{info.endpoint}"
        cache = CompletionCache(spade_cache_dir() / "completions.sqlite")
        return PolicyResponder(policy, model_key, cache, self.batch_size)
