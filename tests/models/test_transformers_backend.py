"""The transformers backend on the real smollm2-135m: batching, stopping, sampling, logprobs."""

from __future__ import annotations

import math

import pytest
import torch

from spade.models import (
    Completion,
    Conversation,
    SamplingParams,
    TransformersConfig,
    TransformersPolicy,
    weights_sha256,
)
from spade.models.policy import cut_at_stop
from spade.models.weights import HASH_CACHE_NAME
from tests.models.conftest import GREEDY, QUESTIONS, user


def test_greedy_answers_correctly(greedy_answers: list[Completion]) -> None:
    answer = greedy_answers[0]
    assert answer.text == "2 + 3 = 5"
    assert answer.finish_reason == "stop"
    assert 0 < answer.completion_tokens < GREEDY.max_new_tokens
    assert answer.prompt_tokens > 10  # the template's system prompt is in it


def test_batch_with_left_padding_matches_one_by_one(
    smollm2: TransformersPolicy, greedy_answers: list[Completion]
) -> None:
    assert len({c.prompt_tokens for c in greedy_answers}) == 3  # so the batch was padded
    one_at_a_time = TransformersPolicy(
        smollm2.model, smollm2.tokenizer, TransformersConfig(batch_size=1)
    ).generate([user(q) for q in QUESTIONS], GREEDY)
    assert [c.text for c in one_at_a_time] == [c.text for c in greedy_answers]
    assert one_at_a_time == greedy_answers  # token counts and finish reasons too


def test_results_keep_input_order_across_batches(
    smollm2: TransformersPolicy, greedy_answers: list[Completion]
) -> None:
    small_batches = TransformersPolicy(
        smollm2.model, smollm2.tokenizer, TransformersConfig(batch_size=2)
    )
    reversed_out = small_batches.generate([user(q) for q in reversed(QUESTIONS)], GREEDY)
    assert reversed_out[::-1] == greedy_answers


def test_max_new_tokens_ends_with_length(greedy_answers: list[Completion]) -> None:
    long_answer = greedy_answers[1]
    assert long_answer.finish_reason == "length"
    assert long_answer.completion_tokens == GREEDY.max_new_tokens


def test_stop_strings_cut_their_row_and_stop_it_early(
    smollm2: TransformersPolicy, greedy_answers: list[Completion]
) -> None:
    stop = (" = ", "!")
    sampling = SamplingParams(max_new_tokens=GREEDY.max_new_tokens, stop=stop)
    stopped = smollm2.generate([user(q) for q in QUESTIONS], sampling)
    assert [c.text for c in stopped] == ["2 + 3", greedy_answers[1].text, "Hello"]
    for got, full in zip(stopped, greedy_answers, strict=True):
        cut, found = cut_at_stop(full.text, stop)
        assert got.text == cut
        if found:  # ended at the stop string: before the end-of-turn token it would have made
            assert got.finish_reason == "stop"
            assert got.completion_tokens < full.completion_tokens
        else:  # a row without a stop string runs on exactly as without stops
            assert got == full


def test_logprobs_match_a_teacher_forced_forward_pass(smollm2: TransformersPolicy) -> None:
    conversations = [user(QUESTIONS[0]), user(QUESTIONS[1])]
    for sampling in (
        SamplingParams(max_new_tokens=8, logprobs=True),
        SamplingParams(max_new_tokens=8, temperature=0.7, seed=1, logprobs=True),
    ):
        out = smollm2.generate(conversations, sampling)
        for conversation, completion in zip(conversations, out, strict=True):
            _check_logprobs(smollm2, conversation, completion, sampling)


def _check_logprobs(
    policy: TransformersPolicy,
    conversation: Conversation,
    completion: Completion,
    sampling: SamplingParams,
) -> None:
    assert completion.token_ids is not None and completion.logprobs is not None
    assert len(completion.token_ids) == len(completion.logprobs) == completion.completion_tokens
    assert all(math.isfinite(lp) and lp <= 0 for lp in completion.logprobs)
    prompt = policy.tokenizer.apply_chat_template(
        conversation, add_generation_prompt=True, tokenize=False
    )
    prompt_ids = policy.tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prompt_ids + completion.token_ids])
    with torch.inference_mode():
        logits = policy.model(ids).logits[0, len(prompt_ids) - 1 : -1].float()
    scale = sampling.temperature or 1.0
    expected = torch.log_softmax(logits / scale, dim=-1)
    expected = expected.gather(1, torch.tensor(completion.token_ids)[:, None]).squeeze(1)
    assert torch.allclose(torch.tensor(completion.logprobs), expected, atol=2e-3)
    text = policy.tokenizer.decode(completion.token_ids, skip_special_tokens=True)
    assert text == completion.text


def test_seeded_sampling_repeats_and_leaves_global_rng_alone(
    smollm2: TransformersPolicy,
) -> None:
    conversations = [user("Tell me a story.")] * 3
    sampling = SamplingParams(max_new_tokens=8, temperature=1.0, seed=7)
    rng_before = torch.get_rng_state()
    first = smollm2.generate(conversations, sampling)
    assert torch.equal(torch.get_rng_state(), rng_before)
    assert smollm2.generate(conversations, sampling) == first
    assert len({c.text for c in first}) > 1  # repeated conversations get different samples
    other_seed = smollm2.generate(conversations, SamplingParams(8, temperature=1.0, seed=8))
    assert [c.text for c in other_seed] != [c.text for c in first]


def test_top_p_near_zero_is_greedy(
    smollm2: TransformersPolicy, greedy_answers: list[Completion]
) -> None:
    nucleus = SamplingParams(max_new_tokens=16, temperature=1.0, top_p=1e-6, seed=3)
    [out] = smollm2.generate([user(QUESTIONS[1])], nucleus)
    assert out.text == greedy_answers[1].text


def test_tools_reach_a_template_without_tool_support(smollm2: TransformersPolicy) -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    one_token = SamplingParams(max_new_tokens=1)
    question = user("What is the weather in Paris?")
    with_tools, without = smollm2.generate([question, question], one_token, [[tool], None])
    assert with_tools.prompt_tokens > without.prompt_tokens + 20
    with pytest.raises(ValueError, match="one entry per conversation"):
        smollm2.generate([question], one_token, tools=[[tool], None])


def test_describe_reports_identity_with_a_cached_weights_hash(
    smollm2: TransformersPolicy,
) -> None:
    info = smollm2.describe()
    assert (info.backend, info.dtype, info.device) == ("transformers", "float32", "cpu")
    assert smollm2.model_dir is not None
    assert info.weights_sha256 == weights_sha256(smollm2.model_dir)
    assert len(info.weights_sha256 or "") == 64
    assert (smollm2.model_dir / HASH_CACHE_NAME).is_file()


def test_a_shared_model_and_tokenizer_are_left_as_found(smollm2: TransformersPolicy) -> None:
    shipped = smollm2.model.generation_config
    smollm2.model.train()  # as a trainer would leave it
    try:
        smollm2.generate([user("Hi")], SamplingParams(max_new_tokens=1))
        assert smollm2.model.training and smollm2.model.generation_config is shipped
    finally:
        smollm2.model.eval()
    assert smollm2.tokenizer.padding_side == "right"


def test_empty_batch_gives_no_completions(smollm2: TransformersPolicy) -> None:
    assert smollm2.generate([], GREEDY) == []


def test_a_prompt_filling_the_context_window_gets_an_empty_length_reply(
    smollm2: TransformersPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = user("Hi")
    long = user("word " * 200)
    monkeypatch.setattr(smollm2.model.config, "max_position_embeddings", 120)
    monkeypatch.setattr(smollm2, "context_overflows", 0)
    with pytest.warns(UserWarning, match="context window"):
        replies = smollm2.generate([long, short], SamplingParams(max_new_tokens=4))
    assert (replies[0].text, replies[0].finish_reason, replies[0].completion_tokens) == (
        "", "length", 0
    )  # fmt: skip
    assert replies[0].prompt_tokens >= 120
    assert replies[1].completion_tokens > 0  # the short prompt in the same call still runs
    assert smollm2.context_overflows == 1
