"""The simulated user of multi_turn entries: a model of its own (`options.user_model`), fixed
while the checkpoint under test changes.

Scores depend on the user model, so its identity is recorded with every sample; compare
multi_turn scores only between runs with the same user. The responder is built on first use
(`load_policy` + `PolicyResponder` + the shared completion cache), so a run that needs no
user (multi_step only, saved predictions) loads no second model; tests pass their own. When
the checkpoint under test has the user model's very weights (the base model evaluated against
itself as user), the user shares the checkpoint's engine instead of loading a second copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from spade.evals.declarations import DeclarationError
from spade.models.policy import Completion, PolicyInfo, SamplingParams
from spade.rollout import GenRequest, PolicyResponder, Responder


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

    def share(self, respond: Responder) -> None:
        """Answer the user's turns with the checkpoint's own engine when the user model has the
        checkpoint's weights (the same file hashes): one model in memory, and the user gets
        the engine under test's speed (vLLM's, for `vllm:` checkpoints). Its replies are that
        engine's; greedy replies of the transformers and vLLM backends are token-identical
        (tests/models). Otherwise, and for a user given by the caller, nothing changes."""
        if self._respond is not None or not isinstance(respond, PolicyResponder):
            return
        from spade.models import ModelSpecError, local_model_dir
        from spade.models.weights import weights_sha256

        info = respond.policy.describe()
        try:
            path = local_model_dir(self.spec)
        except ModelSpecError as exc:
            raise DeclarationError(f"acebench options.user_model: {exc}") from None
        if path is None or info.weights_sha256 is None:
            return
        if weights_sha256(path) != info.weights_sha256:
            return
        self._respond = PolicyResponder(
            respond.policy, respond.model_key, respond.cache, self.batch_size, respond.chains
        )
        self._remember(info, shared_with_checkpoint=True)

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
        self._remember(info)
        model_key = info.weights_sha256 or f"{info.backend}:{info.model}@{info.endpoint}"
        cache = CompletionCache(spade_cache_dir() / "completions.sqlite")
        return PolicyResponder(policy, model_key, cache, self.batch_size)

    def _remember(self, info: PolicyInfo, **extra: Any) -> None:
        self._identity.update(
            backend=info.backend,
            model=info.model,
            weights_sha256=info.weights_sha256,
            endpoint=info.endpoint,
            **extra,
        )
