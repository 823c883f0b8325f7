"""Training samples for the update tests, made the way a sampler's output becomes one.

The prompt is SmolLM2's chat template rendered and tokenised, as the transformers backend
does before generating; the completion is the text's ids and the end-of-turn token, as a
reply that ended by itself is sampled. (The loop's own samples come from real rollouts:
`tests/selfplay/test_token_rollout.py` checks those ids against the sampler.)
"""

from __future__ import annotations

from functools import cache
from typing import Any

from transformers import AutoTokenizer

from spade.models import builtin_model_dir
from spade.models.chat_template import end_of_turn_id, render_prompt
from spade.rl.samples import Role, TrainingSample


@cache
def tokenizer() -> Any:
    return AutoTokenizer.from_pretrained(builtin_model_dir("smollm2-135m"))


def sample(
    messages: list[dict[str, Any]], text: str, advantage: float, role: Role, masked: bool = False
) -> TrainingSample:
    tok = tokenizer()
    prompt = tok(render_prompt(tok, messages), add_special_tokens=False)["input_ids"]
    completion = [*tok(text, add_special_tokens=False)["input_ids"], end_of_turn_id(tok)]
    return TrainingSample(tuple(prompt), tuple(completion), advantage, role, masked=masked)
