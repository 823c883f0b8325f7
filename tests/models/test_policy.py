"""SamplingParams, stop-string cutting and the tools fallback of the chat template."""

from __future__ import annotations

import copy

import pytest

from spade.models import DEFAULT_MAX_NEW_TOKENS, SamplingParams, TransformersPolicy
from spade.models.chat_template import render_prompt, template_supports_tools
from spade.models.policy import cut_at_stop
from tests.models.conftest import user


def test_sampling_defaults_are_explicit_and_greedy() -> None:
    params = SamplingParams()
    assert params.max_new_tokens == DEFAULT_MAX_NEW_TOKENS == 512
    assert params.greedy and params.seed is None and params.stop == ()


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"temperature": -1}, "temperature"),
        ({"top_p": 0}, "top_p"),
        ({"top_p": 1.5}, "top_p"),
    ],
)
def test_bad_sampling_values_are_refused(kwargs: dict, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        SamplingParams(**kwargs)


def test_stop_accepts_a_single_string_and_drops_empty_ones() -> None:
    assert SamplingParams(stop="\n").stop == ("\n",)  # type: ignore[arg-type]
    assert SamplingParams(stop=("", "END")).stop == ("END",)


def test_cut_at_stop_cuts_at_the_earliest_stop() -> None:
    assert cut_at_stop("a END b STOP c", ("STOP", "END")) == ("a ", True)
    assert cut_at_stop("nothing here", ("END",)) == ("nothing here", False)
    assert cut_at_stop("text", ()) == ("text", False)


def test_tools_go_into_the_system_prompt_when_the_template_has_no_place(
    smollm2: TransformersPolicy,
) -> None:
    tool = {
        "type": "function",
        "function": {"name": "look", "description": "Look", "parameters": {"type": "object"}},
    }
    assert not template_supports_tools(smollm2.tokenizer)
    prompt = render_prompt(smollm2.tokenizer, user("hi"), [tool])
    assert prompt.startswith("<|im_start|>system\nYou can call these functions.")
    assert '"name": "look"' in prompt and prompt.endswith("<|im_start|>assistant\n")
    with_system = [{"role": "system", "content": "Be brief."}, *user("hi")]
    prompt = render_prompt(smollm2.tokenizer, with_system, [tool])
    assert prompt.startswith("<|im_start|>system\nBe brief.\n\nYou can call these functions.")
    with pytest.raises(ValueError, match="empty conversation"):
        render_prompt(smollm2.tokenizer, [], None)


def test_a_template_with_tools_gets_them_natively(smollm2: TransformersPolicy) -> None:
    tokenizer = copy.deepcopy(smollm2.tokenizer)
    tokenizer.chat_template = (
        "{% if tools %}TOOLS {{ tools | tojson }}\n{% endif %}"
        "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )
    tool = {"type": "function", "function": {"name": "look", "parameters": {}}}
    assert template_supports_tools(tokenizer)
    prompt = render_prompt(tokenizer, user("hi"), [tool])
    assert prompt.startswith('TOOLS [{"type": "function"') and "user: hi\nassistant:" in prompt
    assert "You can call these functions" not in prompt
