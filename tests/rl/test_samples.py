"""Training samples: tokenised as the policy generated them, loss only on its own tokens."""

from __future__ import annotations

from typing import Any

import pytest

from spade.models.chat_template import render_prompt
from spade.rl.samples import (
    TrainingSample,
    collate,
    end_of_turn_id,
    samples_from_episode,
    tokenize_sample,
)

SINGLE = [{"role": "user", "content": "What is 2+3?"}]
MULTI_TURN = [
    {"role": "system", "content": "You play a text game. Answer with \\boxed{ACTION}."},
    {"role": "user", "content": "You are in a hall."},
    {"role": "assistant", "content": "\\boxed{go north}"},
    {"role": "user", "content": "You see a locked door."},
]
TOOLS = [{"type": "function", "function": {"name": "open", "parameters": {"type": "object"}}}]
COMPLETIONS = [
    "5",
    " leading space",
    "\\boxed{open door}",
    "line1\nline2",
    "```python\nclass MazeEnv:\n    def reset(self, seed=None):\n        pass\n```",
    '{"name": "open", "arguments": {"door": 1}}',
    "trailing space ",
    "\nstarts with a newline",
    "ünïcødé 日本語",
    "",
]


def ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_end_of_turn_is_the_templates_turn_closer(smollm2_tokenizer: Any) -> None:
    assert smollm2_tokenizer.convert_ids_to_tokens(end_of_turn_id(smollm2_tokenizer)) == (
        "<|im_end|>"
    )


@pytest.mark.parametrize("conversation", [SINGLE, MULTI_TURN], ids=["single", "multi_turn"])
@pytest.mark.parametrize("tools", [None, TOOLS], ids=["plain", "tools"])
def test_prompt_plus_completion_tokens_match_the_full_chat(
    smollm2_tokenizer: Any, conversation: list[dict[str, Any]], tools: Any
) -> None:
    tok = smollm2_tokenizer
    eot = end_of_turn_id(tok)
    for text in COMPLETIONS:
        sample = TrainingSample(conversation, text, 1.0, "agent", tools=tools)
        t = tokenize_sample(sample, tok, max_length=4096, end_of_turn=eot)
        # The full chat as the template renders it (tools in the system prompt, since
        # SmolLM2's template has no place for them), with the reply as the last turn.
        prompt_text = render_prompt(tok, conversation, tools)
        full = ids(tok, prompt_text + text + "<|im_end|>\n")
        assert t.prompt_ids == ids(tok, prompt_text)
        assert t.prompt_ids + t.completion_ids == full[: len(t.prompt_ids) + len(t.completion_ids)]
        assert t.completion_ids[-1] == eot


def test_whitespace_at_the_boundary_keeps_the_split_the_policy_generated(
    smollm2_tokenizer: Any,
) -> None:
    # Jointly, "\n" closing the prompt and "\n\n" opening the reply merge into other tokens;
    # the policy generated after the prompt's own tokens, so the split form is the one to
    # score: the prompt stays a prefix and the reply is tokenised alone.
    tok = smollm2_tokenizer
    text = "\n\nTwo newlines"
    t = tokenize_sample(TrainingSample(SINGLE, text, 1.0, "agent"), tok, 4096, end_of_turn_id(tok))
    assert t.prompt_ids == ids(tok, render_prompt(tok, SINGLE))
    assert t.completion_ids[:-1] == ids(tok, text)
    joint = ids(tok, render_prompt(tok, SINGLE) + text)
    assert joint != t.prompt_ids + t.completion_ids[:-1]  # why the split matters


def test_sampled_token_ids_are_used_verbatim(smollm2_tokenizer: Any) -> None:
    # A non-canonical split of "hello" the policy may have sampled; text would re-tokenise it.
    sampled = (*ids(smollm2_tokenizer, "he"), *ids(smollm2_tokenizer, "llo"), 2)
    sample = TrainingSample(SINGLE, "hello", 1.0, "agent", completion_token_ids=sampled)
    t = tokenize_sample(sample, smollm2_tokenizer, 4096, 2)
    assert tuple(t.completion_ids) == sampled
    assert t.completion_ids[:-1] != ids(smollm2_tokenizer, "hello")


def test_completion_mask_marks_exactly_the_completion_tokens(smollm2_tokenizer: Any) -> None:
    tok = smollm2_tokenizer
    eot = end_of_turn_id(tok)
    samples = [
        TrainingSample(SINGLE, "It is 5.", 1.0, "agent"),
        TrainingSample(MULTI_TURN, "\\boxed{open the door with the key}", -1.0, "agent"),
    ]
    tokenized = [tokenize_sample(s, tok, 4096, eot) for s in samples]
    batch = collate(tokenized, pad_id=tok.pad_token_id)
    for row, (sample, t) in enumerate(zip(samples, tokenized, strict=True)):
        mask = batch.completion_mask[row].bool()
        assert tok.decode(batch.input_ids[row][mask]) == sample.completion + "<|im_end|>"
        real = batch.attention_mask[row].bool()
        assert batch.input_ids[row][real].tolist() == t.prompt_ids + t.completion_ids
        assert not (mask & ~real).any()  # padding is never a target
        # Positions count from the row's first real token, as generate() does.
        assert batch.position_ids[row][real].tolist() == list(range(int(real.sum())))
    # Prompts end at the same column (left padding), completions start there.
    assert batch.completion_width == max(len(t.completion_ids) for t in tokenized)
    assert batch.completion_mask[:, : -batch.completion_width].sum() == 0
    assert batch.advantages.tolist() == [1.0, -1.0]


def test_long_prompts_are_cut_from_the_left_keeping_the_completion(
    smollm2_tokenizer: Any,
) -> None:
    tok = smollm2_tokenizer
    eot = end_of_turn_id(tok)
    sample = TrainingSample(MULTI_TURN, "\\boxed{open door}", 1.0, "agent")
    whole = tokenize_sample(sample, tok, 4096, eot)
    cut = tokenize_sample(sample, tok, 30, eot)
    assert cut.truncated and not whole.truncated
    assert cut.completion_ids == whole.completion_ids
    assert len(cut.prompt_ids) + len(cut.completion_ids) == 30
    assert cut.prompt_ids == whole.prompt_ids[-len(cut.prompt_ids) :]
    tiny = tokenize_sample(sample, tok, 4, eot)  # not even the completion fits
    assert len(tiny.prompt_ids) == 1 and tiny.completion_ids == whole.completion_ids[:3]


def test_an_episode_gives_one_sample_per_assistant_turn() -> None:
    episode = [*MULTI_TURN, {"role": "assistant", "content": "\\boxed{open door}"}]
    samples = samples_from_episode(episode, advantage=0.5, tools=TOOLS)
    assert [s.completion for s in samples] == ["\\boxed{go north}", "\\boxed{open door}"]
    assert samples[0].messages == MULTI_TURN[:2]
    assert samples[1].messages == MULTI_TURN
    assert {(s.advantage, s.role, s.masked) for s in samples} == {(0.5, "agent", False)}
    assert all(s.tools == TOOLS for s in samples)
    with_ids = samples_from_episode(episode, 0.5, token_ids=[None, [7, 8, 2]])
    assert [s.completion_token_ids for s in with_ids] == [None, (7, 8, 2)]
    with pytest.raises(ValueError, match="2 assistant turns"):
        samples_from_episode(episode, 0.5, token_ids=[[7]])


def test_bad_samples_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="role"):
        TrainingSample(SINGLE, "x", 1.0, "critic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        TrainingSample(SINGLE, "x", float("nan"), "agent")
    with pytest.raises(ValueError, match="non-empty"):
        TrainingSample([], "x", 1.0, "agent")
