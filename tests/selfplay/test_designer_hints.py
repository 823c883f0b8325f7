"""Designer prompt/code extraction and hint-leak detection against real seed envs."""

from __future__ import annotations

from pathlib import Path

import pytest

from spade.envs import RemoteEnv
from spade.selfplay.designer import (
    DesignRequest,
    Reference,
    designer_messages,
    extract_code,
    repair_messages,
)
from spade.selfplay.hints import check_hint, secret_values

SEED_ENVS = Path(__file__).resolve().parents[2] / "envs_snapshots/spade-seed/1.0.0/envs"
ENV_CODE = (SEED_ENVS / "hidden_number.py").read_text()


def test_prompt_carries_document_skill_references_and_contract() -> None:
    request = DesignRequest("doc-1", "Photosynthesis converts light...", "deduction", "medium",
                            "game", (Reference("class AEnv: ...", 0.5, 0.2),),
                            "Avoid environments like BEnv: too easy.")  # fmt: skip
    text = designer_messages(request)[0]["content"]
    for needle in ("Photosynthesis", "skill=deduction", "win rate 0.50", "too easy", "solution("):
        assert needle in text
    repair = repair_messages(request, "```python\nx\n```", "solution_solves: reward 0.5")
    assert repair[-1]["role"] == "user" and "solution_solves" in repair[-1]["content"]


@pytest.mark.parametrize(
    "reply",
    [
        f"Here you go:\n```python\n{ENV_CODE}```\nEnjoy.",
        f"```python\nprint('draft')\n```\nFinal:\n```python\n{ENV_CODE}```",
        ENV_CODE,
        f"```python\n{ENV_CODE}",  # cut off before the closing fence
    ],
    ids=["fenced", "last-valid-block", "bare", "unclosed"],
)
def test_extract_code_finds_the_env(reply: str) -> None:
    code = extract_code(reply)
    assert code is not None and "class HiddenNumberEnv" in code


def test_extract_code_rejects_replies_without_an_env() -> None:
    assert extract_code("I cannot do that.") is None
    assert extract_code("```python\ndef f(:\n```") is None


def test_leak_detection_on_real_env() -> None:
    with RemoteEnv(ENV_CODE) as env:
        secrets, public = secret_values(env, [0, 1, 2])
        env.reset(0)
        secret = str(env.state()["secret"])
    strategy = "Keep the interval of possible values and always guess its midpoint."
    assert check_hint(strategy, secrets, public).ok
    leaky = check_hint(f"Start by guessing {secret}; it is the answer.", secrets, public)
    assert len(secret) >= 2  # seed 0's secret is a three-digit number
    assert not leaky.ok and secret in leaky.leaked
    # Public values (the range in the first observation) are not leaks.
    assert check_hint("The number lies between 1 and the stated maximum.", secrets, public).ok
