"""The OpenAI-compatible HTTP backend, round trip through a local server backed by smollm2.

The server (tests/models/openai_server.py) stands in for generic OpenAI-compatible servers we do
not control (hosted APIs, llama.cpp): chat only, no token ids, 503s on demand. Its answers come
from the real transformers backend. The real vllm serve is tested in test_vllm_server.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from openai.types.chat import ChatCompletion

from spade.models import (
    Completion,
    OpenAIConfig,
    OpenAIPolicy,
    SamplingParams,
    TransformersPolicy,
)
from spade.models.openai_backend import _completion
from spade.models.policy import TokenPrompt
from tests.models.conftest import GREEDY, QUESTIONS, user
from tests.models.openai_server import ChatCompletionsServer


@pytest.fixture(scope="module")
def server(smollm2: TransformersPolicy) -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer(smollm2) as running:
        yield running


def test_round_trip_matches_the_local_backend(
    server: ChatCompletionsServer, greedy_answers: list[Completion]
) -> None:
    remote = OpenAIPolicy("smollm2-135m", server.base_url, OpenAIConfig(concurrency=3))
    over_http = remote.generate([user(q) for q in QUESTIONS], GREEDY)
    local = greedy_answers
    assert [c.text for c in over_http] == [c.text for c in local]
    assert [c.finish_reason for c in over_http] == [c.finish_reason for c in local]
    assert [c.prompt_tokens for c in over_http] == [c.prompt_tokens for c in local]
    assert [c.completion_tokens for c in over_http] == [c.completion_tokens for c in local]
    info = remote.describe()
    assert (info.backend, info.model, info.endpoint) == ("openai", "smollm2-135m", server.base_url)


def test_request_carries_sampling_tools_and_per_request_seeds(
    server: ChatCompletionsServer,
) -> None:
    tool = {
        "type": "function",
        "function": {"name": "add", "description": "Add", "parameters": {"type": "object"}},
    }
    remote = OpenAIPolicy("smollm2-135m", server.base_url, OpenAIConfig(concurrency=1))
    sampling = SamplingParams(
        max_new_tokens=2, temperature=0.5, top_p=0.9, stop=("\n",), seed=10, logprobs=True
    )
    server.requests.clear()
    out = remote.generate([user("Hi")] * 2, sampling, tools=[[tool], None])
    first, second = server.requests
    assert first["max_tokens"] == 2 and first["temperature"] == 0.5 and first["top_p"] == 0.9
    assert first["stop"] == ["\n"] and first["logprobs"] is True
    assert first["tools"] == [tool] and "tools" not in second
    assert (first["seed"], second["seed"]) == (10, 11)
    assert all(c.logprobs and len(c.logprobs) == c.completion_tokens for c in out)


def test_a_generic_server_gives_no_token_ids_and_takes_no_token_prompts(
    server: ChatCompletionsServer,
) -> None:
    remote = OpenAIPolicy("smollm2-135m", server.base_url)
    [out] = remote.generate([user("Hi")], SamplingParams(max_new_tokens=2))
    assert remote.server == "openai" and out.token_ids is None and out.prompt_token_ids is None
    with pytest.raises(ValueError, match="is not a vLLM server: token prompts need one"):
        remote.generate([TokenPrompt((1, 2, 3))], GREEDY)


def test_max_tokens_maps_to_length(server: ChatCompletionsServer) -> None:
    remote = OpenAIPolicy("smollm2-135m", server.base_url)
    [out] = remote.generate([user(QUESTIONS[1])], SamplingParams(max_new_tokens=2))
    assert out.finish_reason == "length" and out.completion_tokens == 2


def test_server_errors_are_retried(
    smollm2: TransformersPolicy, greedy_answers: list[Completion]
) -> None:
    with ChatCompletionsServer(smollm2, fail_first=2) as flaky:
        remote = OpenAIPolicy("smollm2-135m", flaky.base_url, OpenAIConfig(max_retries=2))
        [out] = remote.generate([user("What is 2+3?")], SamplingParams(max_new_tokens=2))
        assert out.text and greedy_answers[0].text.startswith(out.text)
        assert len(flaky.requests) == 3


def test_retries_give_up_with_the_servers_error(smollm2: TransformersPolicy) -> None:
    with ChatCompletionsServer(smollm2, fail_first=5) as down:
        remote = OpenAIPolicy("smollm2-135m", down.base_url, OpenAIConfig(max_retries=0))
        with pytest.raises(openai.InternalServerError, match="warming up"):
            remote.generate([user("Hi")], GREEDY)
        assert len(down.requests) == 1


def test_tool_calls_become_text_actions_and_structured_calls() -> None:
    response = ChatCompletion.model_validate(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "cd", "arguments": '{"folder": "doc"}'},
                            }
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12},
        }
    )
    out = _completion(response, GREEDY)
    assert out.finish_reason == "stop"
    assert out.text == '{"name": "cd", "arguments": {"folder": "doc"}}'
    assert out.tool_calls == [{"name": "cd", "arguments": {"folder": "doc"}}]
    assert (out.prompt_tokens, out.completion_tokens) == (7, 5)
