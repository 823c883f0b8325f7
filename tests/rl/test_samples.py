"""Training samples: the sampler's exact ids, cut to fit, collated with loss only on them."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from spade.models.chat_template import ChatTokens, end_of_turn_id, render_prompt
from spade.rl.samples import TrainingSample, collate, fit_sample

SINGLE = [{"role": "user", "content": "What is 2+3?"}]
MULTI_TURN = [
    {"role": "system", "content": "You play a text game. Answer with \\boxed{ACTION}."},
    {"role": "user", "content": "You are in a hall."},
]
REPLIES = [
    "\\boxed{go north}",
    " leading space",
    "line1\nline2",
    '{"name": "open", "arguments": {"door": 1}}',
    "trailing space ",
    "\nstarts with a newline",
    "ünïcødé 日本語",
]


def ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def prompt_ids(tokenizer: Any, messages: list[dict[str, Any]]) -> tuple[int, ...]:
    return tuple(ids(tokenizer, render_prompt(tokenizer, messages)))


def test_end_of_turn_is_the_templates_turn_closer(smollm2_tokenizer: Any) -> None:
    assert smollm2_tokenizer.convert_ids_to_tokens(end_of_turn_id(smollm2_tokenizer)) == (
        "<|im_end|>"
    )


@pytest.mark.parametrize("reply", REPLIES)
def test_continuation_after_an_ended_reply_equals_the_templates_own_rendering(
    smollm2_tokenizer: Any, reply: str
) -> None:
    """Where re-rendering would give the same ids, the delta does too (SmolLM2's template)."""
    tok = smollm2_tokenizer
    chat = ChatTokens(tok)
    sampled = [*ids(tok, reply), chat.end_of_turn_id]
    observation = {"role": "user", "content": "You see a locked door."}
    extended = (*prompt_ids(tok, MULTI_TURN), *sampled, *chat.continuation(sampled, [observation]))
    rendered = [*MULTI_TURN, {"role": "assistant", "content": reply}, observation]
    # The template strips a reply's surrounding whitespace; token-in keeps what was sampled.
    if reply == reply.strip():
        assert extended == prompt_ids(tok, rendered)
    assert tok.decode(extended).endswith("<|im_start|>user\nYou see a locked door.<|im_end|>\n"
                                         "<|im_start|>assistant\n")  # fmt: skip


def test_a_cut_off_reply_is_closed_as_context_and_keeps_its_ids(smollm2_tokenizer: Any) -> None:
    tok = smollm2_tokenizer
    chat = ChatTokens(tok)
    cut = ids(tok, "I think the answer is")  # reached max_new_tokens: no end-of-turn sampled
    delta = chat.continuation(cut, [{"role": "user", "content": "Go on."}])
    assert delta[0] == chat.end_of_turn_id  # closes the turn, as context for the next one
    assert (
        tok.decode(delta)
        == "<|im_end|>\n<|im_start|>user\nGo on.<|im_end|>\n<|im_start|>assistant\n"
    )
    # The sample of that turn is the sampled ids alone: no end-of-turn appended.
    sample = TrainingSample(prompt_ids(tok, SINGLE), tuple(cut), 1.0, "agent")
    assert fit_sample(sample, 4096).completion_ids == cut


def test_sampled_ids_are_used_verbatim(smollm2_tokenizer: Any) -> None:
    tok = smollm2_tokenizer
    # A non-canonical split of "hello" the policy may have sampled; text would re-tokenise it.
    sampled = (*ids(tok, "he"), *ids(tok, "llo"), 2)
    sample = TrainingSample(prompt_ids(tok, SINGLE), sampled, 1.0, "agent")
    assert tuple(fit_sample(sample, 4096).completion_ids) == sampled
    assert list(sampled[:-1]) != ids(tok, "hello")


def test_completion_mask_marks_exactly_the_completion_tokens(smollm2_tokenizer: Any) -> None:
    tok = smollm2_tokenizer
    eot = end_of_turn_id(tok)
    texts = ["It is 5.", "\\boxed{open the door with the key}"]
    samples = [
        TrainingSample(prompt_ids(tok, SINGLE), (*ids(tok, texts[0]), eot), 1.0, "agent",
                       sampled_logprobs=(-0.5,) * (len(ids(tok, texts[0])) + 1)),
        TrainingSample(prompt_ids(tok, MULTI_TURN), tuple(ids(tok, texts[1])), -1.0, "agent",
                       sampled_logprobs=(-1.5,) * len(ids(tok, texts[1]))),
    ]  # fmt: skip
    fitted = [fit_sample(s, 4096) for s in samples]
    batch = collate(fitted, pad_id=tok.pad_token_id)
    decoded = [texts[0] + "<|im_end|>", texts[1]]
    for row, t in enumerate(fitted):
        mask = batch.completion_mask[row].bool()
        assert tok.decode(batch.input_ids[row][mask]) == decoded[row]
        real = batch.attention_mask[row].bool()
        assert batch.input_ids[row][real].tolist() == t.prompt_ids + t.completion_ids
        assert not (mask & ~real).any()  # padding is never a target
        assert batch.position_ids[row][real].tolist() == list(range(int(real.sum())))
    assert batch.completion_width == max(len(t.completion_ids) for t in fitted)
    assert batch.completion_mask[:, : -batch.completion_width].sum() == 0
    assert batch.advantages.tolist() == [1.0, -1.0]
    # The sampler's logprobs line up with the completion positions, zero-padded after.
    assert batch.sampled_logprobs is not None
    width = batch.completion_width
    in_mask = batch.completion_mask[:, -width:].bool()
    assert set(batch.sampled_logprobs[in_mask].tolist()) == {-0.5, -1.5}
    assert torch.all(batch.sampled_logprobs[~in_mask] == 0)
    # A batch with a row lacking them carries none (no half-known mismatch).
    plain = fit_sample(TrainingSample(prompt_ids(tok, SINGLE), (5, eot), 1.0, "agent"), 4096)
    assert collate([fitted[0], plain], tok.pad_token_id).sampled_logprobs is None


def test_long_prompts_are_cut_from_the_left_keeping_the_completion(smollm2_tokenizer: Any) -> None:
    tok = smollm2_tokenizer
    completion = (*ids(tok, "\\boxed{open door}"), 2)
    sample = TrainingSample(
        prompt_ids(tok, MULTI_TURN),
        completion,
        1.0,
        "agent",
        sampled_logprobs=tuple(-float(i) for i in range(len(completion))),
    )
    whole, cut = fit_sample(sample, 4096), fit_sample(sample, 30)
    assert cut.truncated and not whole.truncated
    assert cut.completion_ids == whole.completion_ids
    assert len(cut.prompt_ids) + len(cut.completion_ids) == 30
    assert cut.prompt_ids == whole.prompt_ids[-len(cut.prompt_ids) :]
    tiny = fit_sample(sample, 4)  # not even the completion fits
    assert len(tiny.prompt_ids) == 1 and tiny.completion_ids == whole.completion_ids[:3]
    assert tiny.sampled_logprobs == [0.0, -1.0, -2.0]


def test_bad_samples_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="role"):
        TrainingSample((1,), (2,), 1.0, "critic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        TrainingSample((1,), (2,), float("nan"), "agent")
    with pytest.raises(ValueError, match="non-empty prompt"):
        TrainingSample((), (2,), 1.0, "agent")
    with pytest.raises(ValueError, match="at least one completion token"):
        TrainingSample((1,), (), 1.0, "agent")
    with pytest.raises(ValueError, match="2 entries for 1 completion tokens"):
        TrainingSample((1,), (2,), 1.0, "agent", sampled_logprobs=(-1.0, -2.0))


def test_an_episode_sample_trains_only_its_sampled_spans(smollm2_tokenizer: Any) -> None:
    """One sequence per episode: reply, observation, reply; the observation is context."""
    tok = smollm2_tokenizer
    reply1, delta, reply2 = ids(tok, "\\boxed{50}") + [2], ids(tok, "\nLower.\n"), ids(tok, "x")
    completion = (*reply1, *delta, *reply2)
    mask = (1,) * len(reply1) + (0,) * len(delta) + (1,) * len(reply2)
    sample = TrainingSample(
        prompt_ids(tok, SINGLE),
        completion,
        1.0,
        "agent",
        sampled_logprobs=tuple(-1.0 * m for m in mask),
        completion_mask=mask,
    )
    fitted = fit_sample(sample, 4096)
    assert fitted.trained_tokens == len(reply1) + len(reply2)
    batch = collate([fitted], tok.pad_token_id)
    trained = batch.input_ids[0][batch.completion_mask[0].bool()].tolist()
    assert trained == [*reply1, *reply2]
    # Too long even with one token of context: the later turns are lost, the first kept.
    cut = fit_sample(sample, 1 + len(reply1) + 1)
    assert cut.completion_mask == [1] * len(reply1) + [0] and cut.trained_tokens == len(reply1)
    with pytest.raises(ValueError, match="must start with a sampled token"):
        TrainingSample((1,), (2, 3), 1.0, "agent", completion_mask=(0, 1))
    with pytest.raises(ValueError, match="1 entries for 2 completion tokens"):
        TrainingSample((1,), (2, 3), 1.0, "agent", completion_mask=(1,))
