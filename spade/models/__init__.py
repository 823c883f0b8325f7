"""Policies: batched chat generation behind one interface (transformers, vLLM, HTTP).

Backends import torch/transformers/openai/vllm, so they load on first use: importing
`spade.models` for the types stays fast (e.g. `spade-eval --predictions` needs no model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spade.lazy import lazy_attributes
from spade.models.builtin import (
    BUILTIN_MODELS,
    BuiltinModelError,
    builtin_model_dir,
    ensure_builtin_model,
    spade_cache_dir,
)
from spade.models.load import ModelSpecError, load_policy, local_model_dir
from spade.models.policy import (
    DEFAULT_MAX_NEW_TOKENS,
    Completion,
    Conversation,
    Message,
    Policy,
    PolicyInfo,
    SamplingParams,
    ToolSchema,
)
from spade.models.weights import weights_sha256

if TYPE_CHECKING:
    from spade.models.openai_backend import OpenAIConfig, OpenAIPolicy
    from spade.models.transformers_backend import TransformersConfig, TransformersPolicy
    from spade.models.vllm_backend import VLLMConfig, VLLMPolicy

_LAZY = {
    "OpenAIConfig": "spade.models.openai_backend",
    "OpenAIPolicy": "spade.models.openai_backend",
    "TransformersConfig": "spade.models.transformers_backend",
    "TransformersPolicy": "spade.models.transformers_backend",
    "VLLMConfig": "spade.models.vllm_backend",
    "VLLMPolicy": "spade.models.vllm_backend",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "BUILTIN_MODELS",
    "DEFAULT_MAX_NEW_TOKENS",
    "BuiltinModelError",
    "Completion",
    "Conversation",
    "Message",
    "ModelSpecError",
    "OpenAIConfig",
    "OpenAIPolicy",
    "Policy",
    "PolicyInfo",
    "SamplingParams",
    "ToolSchema",
    "TransformersConfig",
    "TransformersPolicy",
    "VLLMConfig",
    "VLLMPolicy",
    "builtin_model_dir",
    "ensure_builtin_model",
    "load_policy",
    "local_model_dir",
    "spade_cache_dir",
    "weights_sha256",
]
