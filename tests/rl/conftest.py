"""A tiny Llama (random weights, SmolLM2's tokenizer and chat template) for fast update tests.

Real components throughout: the tokenizer and template are SmolLM2's (from the built-in
model, converted once per machine), the model is a real `LlamaForCausalLM`, only small.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from spade.models import builtin_model_dir


@pytest.fixture(scope="session")
def smollm2_tokenizer() -> Any:
    return AutoTokenizer.from_pretrained(builtin_model_dir("smollm2-135m"))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory, smollm2_tokenizer: Any) -> Path:
    config = LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        vocab_size=len(smollm2_tokenizer),
        tie_word_embeddings=True,
        bos_token_id=smollm2_tokenizer.bos_token_id,
        eos_token_id=smollm2_tokenizer.eos_token_id,
        pad_token_id=smollm2_tokenizer.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(config)
    out = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(out)
    smollm2_tokenizer.save_pretrained(out)
    return out
