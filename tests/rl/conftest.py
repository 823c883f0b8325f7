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


def save_tiny_llama(out: Path, tokenizer: Any, hidden_size: int = 32) -> Path:
    """A 2-layer Llama with random weights (seed 0) and `tokenizer`, saved to `out`: head size
    hidden_size / 2 (vLLM's CPU attention needs 32 or more, i.e. hidden_size 64)."""
    config = LlamaConfig(
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        vocab_size=len(tokenizer),
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory, smollm2_tokenizer: Any) -> Path:
    return save_tiny_llama(tmp_path_factory.mktemp("tiny-llama"), smollm2_tokenizer)
