"""Policy backend on vLLM in this process (`pip install 'spade[vllm]'`, needs a GPU).

Thin on purpose: prompts are rendered by the same chat-template code as the transformers
backend and handed to vLLM as token ids, so both backends see identical prompts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spade.models.chat_template import render_prompt
from spade.models.policy import (
    Completion,
    Conversation,
    PolicyInfo,
    SamplingParams,
    ToolSchema,
    check_tools_arg,
)
from spade.models.weights import weights_sha256


@dataclass(frozen=True)
class VLLMConfig:
    """Engine settings; anything else vLLM's `LLM(...)` takes goes in `engine_kwargs`."""

    dtype: str = "auto"
    """Weights dtype, as vLLM spells it (`auto` takes the checkpoint's)."""
    tensor_parallel_size: int = 1
    """GPUs one model is split over."""
    gpu_memory_utilization: float = 0.9
    """Share of GPU memory vLLM may take for weights and KV cache."""
    logprobs_mode: str | None = "processed_logprobs"
    """Logprobs after temperature, as the transformers backend returns them (vLLM >= 0.10.2;
    set None on older vLLM, which then returns raw-logit logprobs)."""
    engine_kwargs: dict[str, Any] = field(default_factory=dict)
    """Passed to `vllm.LLM` unchanged."""


def require_vllm() -> Any:
    """The vllm module, or an ImportError saying how to install it."""
    try:
        import vllm
    except ImportError:
        raise ImportError(
            "the vllm backend needs vLLM: pip install 'spade[vllm]' (CUDA GPU required)"
        ) from None
    return vllm


class VLLMPolicy:
    """Batched generation with an in-process vLLM engine."""

    backend = "vllm"

    def __init__(
        self, model_dir: str | Path, config: VLLMConfig | None = None, name: str = ""
    ) -> None:
        vllm = require_vllm()
        self._vllm = vllm
        self.model_dir = Path(model_dir)
        self.name = name or str(model_dir)
        self.config = config or VLLMConfig()
        kwargs = dict(self.config.engine_kwargs)
        if self.config.logprobs_mode is not None:
            kwargs.setdefault("logprobs_mode", self.config.logprobs_mode)
        self.llm = vllm.LLM(
            model=str(self.model_dir),
            dtype=self.config.dtype,
            tensor_parallel_size=self.config.tensor_parallel_size,
            gpu_memory_utilization=self.config.gpu_memory_utilization,
            **kwargs,
        )
        self.tokenizer = self.llm.get_tokenizer()
        self._weights_sha256: str | None = None

    def describe(self) -> PolicyInfo:
        if self._weights_sha256 is None:
            self._weights_sha256 = weights_sha256(self.model_dir)
        return PolicyInfo(
            backend=self.backend,
            model=self.name,
            weights_sha256=self._weights_sha256,
            dtype=str(self._engine_dtype()).removeprefix("torch."),
            device="cuda",
        )

    def _engine_dtype(self) -> object:
        # Where the resolved dtype lives has moved between vLLM versions.
        model_config = getattr(self.llm.llm_engine, "model_config", None)
        return getattr(model_config, "dtype", self.config.dtype)

    def generate(
        self,
        conversations: Sequence[Conversation],
        sampling: SamplingParams,
        tools: Sequence[list[ToolSchema] | None] | None = None,
    ) -> list[Completion]:
        per_conv_tools = check_tools_arg(conversations, tools)
        if not conversations:
            return []
        prompts = [
            {"prompt_token_ids": self._prompt_ids(conv, conv_tools)}
            for conv, conv_tools in zip(conversations, per_conv_tools, strict=True)
        ]
        params = [self._params(sampling, index) for index in range(len(prompts))]
        outputs = self.llm.generate(prompts, params, use_tqdm=False)
        return [_completion(output, sampling) for output in outputs]

    def _prompt_ids(self, conv: Conversation, tools: list[ToolSchema] | None) -> list[int]:
        text = render_prompt(self.tokenizer, conv, tools)
        # The template already wrote any BOS; letting the tokenizer add one would double it.
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _params(self, sampling: SamplingParams, index: int) -> Any:
        return self._vllm.SamplingParams(
            n=1,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_new_tokens,
            stop=list(sampling.stop) or None,
            # Per-request seeds: offset so repeated conversations draw different samples.
            seed=None if sampling.seed is None else sampling.seed + index,
            logprobs=0 if sampling.logprobs else None,  # 0: just the sampled token's
        )


def _completion(output: Any, sampling: SamplingParams) -> Completion:
    out = output.outputs[0]
    token_ids = list(out.token_ids)
    completion = Completion(
        text=out.text,
        finish_reason="length" if out.finish_reason == "length" else "stop",
        prompt_tokens=len(output.prompt_token_ids or []),
        completion_tokens=len(token_ids),
    )
    if sampling.logprobs and out.logprobs is not None:
        completion.token_ids = token_ids
        completion.logprobs = [
            step[token].logprob for step, token in zip(out.logprobs, token_ids, strict=True)
        ]
    return completion
