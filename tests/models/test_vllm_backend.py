"""The vLLM backend's output mapping.

vLLM needs a CUDA GPU and is an optional extra, so it cannot run here; its RequestOutput
is stood in for by plain objects with the same fields (vLLM's documented output shape).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spade.models import SamplingParams
from spade.models.vllm_backend import _completion


def _output(finish_reason: str, token_ids: list[int], logprobs: list | None) -> SimpleNamespace:
    completion = SimpleNamespace(
        text="2 + 3 = 5", token_ids=token_ids, finish_reason=finish_reason, logprobs=logprobs
    )
    return SimpleNamespace(prompt_token_ids=[1, 2, 3, 4], outputs=[completion])


@pytest.mark.parametrize(("vllm_reason", "ours"), [("stop", "stop"), ("length", "length")])
def test_finish_reason_and_counts(vllm_reason: str, ours: str) -> None:
    out = _completion(_output(vllm_reason, [7, 8, 2], None), SamplingParams())
    assert (out.finish_reason, out.prompt_tokens, out.completion_tokens) == (ours, 4, 3)
    assert out.token_ids is None and out.logprobs is None


def test_logprobs_are_those_of_the_sampled_tokens() -> None:
    steps = [
        {7: SimpleNamespace(logprob=-0.5), 9: SimpleNamespace(logprob=-1.0)},
        {8: SimpleNamespace(logprob=-0.25)},
    ]
    out = _completion(_output("stop", [7, 8], steps), SamplingParams(logprobs=True))
    assert out.token_ids == [7, 8] and out.logprobs == [-0.5, -0.25]
