"""Policy backend on an OpenAI-compatible chat completions server (vllm serve, llama.cpp, ...)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from openai import OpenAI

from spade.models.policy import (
    Completion,
    Conversation,
    PolicyInfo,
    SamplingParams,
    ToolSchema,
    check_tools_arg,
    cut_at_stop,
)


@dataclass(frozen=True)
class OpenAIConfig:
    """How requests are sent. One request per conversation."""

    api_key: str | None = None
    """API key; default $OPENAI_API_KEY, else 'EMPTY' (what local servers expect)."""
    concurrency: int = 16
    """Requests in flight at once (a thread pool); servers batch them."""
    max_retries: int = 5
    """Retries per request on connection errors, 408/409/429 and 5xx, with exponential
    backoff and jitter (the openai SDK's retry logic)."""
    timeout_s: float = 600.0
    """Seconds before one request (one attempt) is abandoned."""


class OpenAIPolicy:
    """Batched generation as concurrent chat.completions requests."""

    backend = "openai"

    def __init__(self, model: str, base_url: str, config: OpenAIConfig | None = None) -> None:
        self.model = model
        self.base_url = base_url
        self.config = config or OpenAIConfig()
        if self.config.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.config.concurrency}")
        self.client = OpenAI(
            base_url=base_url,
            api_key=self.config.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
            max_retries=self.config.max_retries,
            timeout=self.config.timeout_s,
        )

    def describe(self) -> PolicyInfo:
        return PolicyInfo(backend=self.backend, model=self.model, endpoint=self.base_url)

    def generate(
        self,
        conversations: Sequence[Conversation],
        sampling: SamplingParams,
        tools: Sequence[list[ToolSchema] | None] | None = None,
    ) -> list[Completion]:
        per_conv_tools = check_tools_arg(conversations, tools)
        if not conversations:
            return []
        workers = min(self.config.concurrency, len(conversations))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pairs = zip(conversations, per_conv_tools, strict=True)
            jobs = [
                pool.submit(self._one, conv, conv_tools, sampling, index)
                for index, (conv, conv_tools) in enumerate(pairs)
            ]
            return [job.result() for job in jobs]

    def _one(
        self,
        conversation: Conversation,
        tools: list[ToolSchema] | None,
        sampling: SamplingParams,
        index: int,
    ) -> Completion:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": conversation,
            # max_tokens, not max_completion_tokens: what vLLM and llama.cpp servers read.
            "max_tokens": sampling.max_new_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
        }
        if sampling.stop:
            request["stop"] = list(sampling.stop)
        if sampling.seed is not None:
            # Each request is seeded on its own: offset by position so that repeated
            # conversations (how callers ask for n samples) do not all draw the same one.
            request["seed"] = sampling.seed + index
        if tools:
            request["tools"] = tools
        if sampling.logprobs:
            request["logprobs"] = True
        response = self.client.chat.completions.create(**request)
        return _completion(response, sampling)


def _completion(response: Any, sampling: SamplingParams) -> Completion:
    choice = response.choices[0]
    calls = [_tool_call(call) for call in (choice.message.tool_calls or [])]
    # Parsed tool calls also go into the text, in the env contract's action format, so
    # downstream code reads one channel whichever server (and parser) produced them.
    text, found = cut_at_stop(choice.message.content or "", sampling.stop)
    text = "\n".join(filter(None, [text, *(_call_text(call) for call in calls)]))
    usage = response.usage
    logprobs = None
    if sampling.logprobs and choice.logprobs is not None and choice.logprobs.content:
        logprobs = [token.logprob for token in choice.logprobs.content]
    return Completion(
        text=text,
        finish_reason="length" if choice.finish_reason == "length" and not found else "stop",
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
        logprobs=logprobs,
        tool_calls=calls or None,
    )


def _tool_call(call: Any) -> dict[str, Any]:
    raw = call.function.arguments or "{}"
    try:
        arguments = json.loads(raw)
    except json.JSONDecodeError:
        arguments = raw  # kept verbatim: the env answers a malformed call with an error
    return {"name": call.function.name, "arguments": arguments}


def _call_text(call: dict[str, Any]) -> str:
    # The env contract's action: {"name": NAME, "arguments": {...}} (spade.envs.tools).
    return json.dumps(call, ensure_ascii=False)
