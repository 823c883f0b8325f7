"""The built-in smollm2-135m model, loaded once per test session.

The first run on a machine converts it into the user cache (about 40 s, with a PyPI
download); later runs load it from there in a second or two.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from spade.models import Conversation, TransformersPolicy, builtin_model_dir

# Different lengths on purpose: batched together they need left padding.
QUESTIONS = [
    "What is 2+3?",
    "Name three colours of the rainbow, and say which one is your favourite and why.",
    "Hi",
]


def user(text: str) -> Conversation:
    return [{"role": "user", "content": text}]


@pytest.fixture(scope="session")
def smollm2() -> Iterator[TransformersPolicy]:
    yield TransformersPolicy.from_pretrained(builtin_model_dir("smollm2-135m"))
