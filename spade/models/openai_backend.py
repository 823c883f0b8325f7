"""Policy backend on an OpenAI-compatible server (vllm serve, llama.cpp, a hosted API).

Two ways to talk to it, chosen by `OpenAIConfig.server`:

- `vllm`: token ids in and out. Prompts go to /v1/completions as token ids (a `TokenPrompt`
  as is; a chat rendered here by the same chat-template code as the local backends, when a
  tokenizer is given), with vLLM's `return_token_ids` extension, so every completion carries
  the sampled ids and the prompt ids the model was fed. Chats without a local tokenizer go to
  /v1/chat/completions, also with `return_token_ids` (the server renders the template).
- `openai`: any other server. Chats go to /v1/chat/completions; the server's tool-call
  parser, if any, fills `tool_calls`. Such servers do not report token ids: `token_ids` and
  `prompt_token_ids` are None, and a `TokenPrompt` is refused.

Logprobs are whatever the server computes: a spade-managed `vllm serve` (vllm_server.py)
returns vLLM's processed logprobs, which match `Completion.logprobs` with top_p 1.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import openai
from openai import OpenAI

from spade.models.chat_template import render_prompt
from spade.models.policy import (
    Completion,
    Conversation,
    PolicyInfo,
    Prompt,
    SamplingParams,
    TokenPrompt,
    ToolSchema,
    check_tools_arg,
    cut_at_stop,
)

ServerKind = Literal["auto", "vllm", "openai"]


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
    server: ServerKind = "auto"
    """`vllm` (token ids in and out), `openai` (chat only, no token ids), or `auto`: asks the
    server's GET /version once, which vLLM answers (see the module doc)."""


class OpenAIPolicy:
    """Batched generation as concurrent requests to an OpenAI-compatible server."""

    backend = "openai"
    concurrent_callers = True
    """`generate` may be called from several threads at once: the server batches every
    caller's requests together (vLLM continuously)."""

    def __init__(
        self,
        model: str,
        base_url: str,
        config: OpenAIConfig | None = None,
        tokenizer: Any = None,
        alive: Callable[[], None] | None = None,
    ) -> None:
        """`tokenizer`: the served model's, to render chats here (vLLM servers only);
        `alive`: raises if the server is known to be gone (called before each batch and when
        a request cannot connect), so a dead server is named instead of retried."""
        self.model = model
        self.base_url = base_url
        self.config = config or OpenAIConfig()
        if self.config.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.config.concurrency}")
        self.tokenizer = tokenizer
        self.alive = alive
        self.client = OpenAI(
            base_url=base_url,
            api_key=self.config.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
            max_retries=self.config.max_retries,
            timeout=self.config.timeout_s,
        )
        self._server: ServerKind = self.config.server

    def describe(self) -> PolicyInfo:
        return PolicyInfo(backend=self.backend, model=self.model, endpoint=self.base_url)

    @property
    def server(self) -> Literal["vllm", "openai"]:
        """What is at base_url (asked once when the config says `auto`)."""
        if self._server == "auto":
            self._server = "vllm" if _is_vllm(self.base_url, self.config.timeout_s) else "openai"
        return "vllm" if self._server == "vllm" else "openai"

    def generate(
        self,
        conversations: Sequence[Prompt],
        sampling: SamplingParams,
        tools: Sequence[list[ToolSchema] | None] | None = None,
    ) -> list[Completion]:
        per_conv_tools = check_tools_arg(conversations, tools)
        if not conversations:
            return []
        if self.alive is not None:
            self.alive()
        if self.server == "vllm" and sampling.logprobs and sampling.top_p < 1:
            raise ValueError(
                f"vLLM's logprobs with top_p={sampling.top_p} are renormalised over the "
                "nucleus, not softmax(logits / temperature): ask for logprobs with top_p 1"
            )
        if self.server == "openai" and any(isinstance(c, TokenPrompt) for c in conversations):
            raise ValueError(
                f"{self.base_url} is not a vLLM server: token prompts need one (OpenAIConfig "
                "server: vllm to say it is)"
            )
        workers = min(self.config.concurrency, len(conversations))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pairs = zip(conversations, per_conv_tools, strict=True)
            jobs = [
                pool.submit(self._one, conv, conv_tools, sampling, index)
                for index, (conv, conv_tools) in enumerate(pairs)
            ]
            return [job.result() for job in jobs]

    def _one(
        self, prompt: Prompt, tools: list[ToolSchema] | None, sampling: SamplingParams, index: int
    ) -> Completion:
        try:
            if isinstance(prompt, TokenPrompt):
                return self._complete_ids(list(prompt.ids), sampling, index)
            if self.server == "vllm" and self.tokenizer is not None:
                text = render_prompt(self.tokenizer, prompt, tools)
                ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
                return self._complete_ids(list(ids), sampling, index)
            return self._chat(prompt, tools, sampling, index)
        except openai.APIConnectionError:
            if self.alive is not None:
                self.alive()  # a server that died says so, instead of "connection error"
            raise

    def _sampling_fields(self, sampling: SamplingParams, index: int) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
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
        return request

    def _complete_ids(self, ids: list[int], sampling: SamplingParams, index: int) -> Completion:
        request = self._sampling_fields(sampling, index)
        if sampling.logprobs:
            request["logprobs"] = 0  # the sampled token's own, no alternatives
        response = self.client.completions.create(
            prompt=ids, extra_body={"return_token_ids": True}, **request
        )
        return _token_completion(response, ids, sampling)

    def _chat(
        self,
        conversation: Conversation,
        tools: list[ToolSchema] | None,
        sampling: SamplingParams,
        index: int,
    ) -> Completion:
        request = self._sampling_fields(sampling, index)
        request["messages"] = conversation
        if tools:
            request["tools"] = tools
        if sampling.logprobs:
            request["logprobs"] = True
        if self.server == "vllm":
            request["extra_body"] = {"return_token_ids": True}
        response = self.client.chat.completions.create(**request)
        return _completion(response, sampling)


def _is_vllm(base_url: str, timeout_s: float) -> bool:
    """Whether the server answers vLLM's GET /version (at the root, beside /v1)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        with urllib.request.urlopen(f"{root}/version", timeout=min(timeout_s, 30.0)) as reply:
            return "version" in json.load(reply)
    except (OSError, ValueError, TypeError):  # 404, not JSON, unreachable: not vLLM
        return False


def _extra(obj: Any, name: str) -> Any:
    """A field the OpenAI SDK does not know (vLLM's extensions), or None."""
    value = getattr(obj, name, None)
    if value is None and getattr(obj, "model_extra", None):
        value = obj.model_extra.get(name)
    return value


def _token_completion(response: Any, prompt_ids: list[int], sampling: SamplingParams) -> Completion:
    choice = response.choices[0]
    token_ids = _extra(choice, "token_ids")
    if token_ids is None:
        raise RuntimeError("the server ignored return_token_ids: is it vLLM >= 0.10.2?")
    token_ids = [int(t) for t in token_ids]
    logprobs = None
    if sampling.logprobs:
        logprobs = [float(x) for x in (choice.logprobs.token_logprobs if choice.logprobs else [])]
        if len(logprobs) != len(token_ids):
            raise RuntimeError(
                f"the server returned {len(logprobs)} logprobs for {len(token_ids)} tokens"
            )
    return Completion(
        text=choice.text,
        finish_reason="length" if choice.finish_reason == "length" else "stop",
        prompt_tokens=len(prompt_ids),
        completion_tokens=len(token_ids),
        token_ids=token_ids,
        logprobs=logprobs,
        prompt_token_ids=[int(t) for t in (_extra(choice, "prompt_token_ids") or prompt_ids)],
    )


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
    token_ids = _extra(choice, "token_ids")
    prompt_ids = _extra(response, "prompt_token_ids")
    return Completion(
        text=text,
        finish_reason="length" if choice.finish_reason == "length" and not found else "stop",
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
        logprobs=logprobs,
        tool_calls=calls or None,
        token_ids=None if token_ids is None else [int(t) for t in token_ids],
        prompt_token_ids=None if prompt_ids is None else [int(t) for t in prompt_ids],
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
