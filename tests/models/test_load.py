"""load_policy resolves every checkpoint form and names the problem with a bad one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from spade.models import (
    ModelSpecError,
    OpenAIPolicy,
    Policy,
    SamplingParams,
    TransformersPolicy,
    load_policy,
)
from tests.models.conftest import user


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("no-such-alias", "not an existing model dir or a known alias"),
        ("/nonexistent/model", "not an existing model dir or a known alias"),
        ("", "not an existing model dir or a known alias"),
        ("openai:gpt-4o", "expected openai:MODEL@BASE_URL"),
        ("openai:@http://localhost:8000/v1", "expected openai:MODEL@BASE_URL"),
        ("openai:m@localhost:8000", "expected openai:MODEL@BASE_URL"),
        ("vllm:/nonexistent/model", "not an existing model dir or a known alias"),
    ],
)
def test_bad_specs_raise_one_line_errors(spec: str, says: str) -> None:
    with pytest.raises(ModelSpecError, match=says) as caught:
        load_policy(spec)
    message = str(caught.value)
    assert "\n" not in message and repr(spec) in message
    assert "smollm2-135m" in message or "openai:" in message
    assert isinstance(caught.value, ValueError)


def test_a_dir_without_config_json_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="has no config.json"):
        load_policy(str(tmp_path))


def test_unknown_options_are_named(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="unknown option.*batchsize.*valid: .*batch_size"):
        load_policy("smollm2-135m", batchsize=4)
    with pytest.raises(ModelSpecError, match="unknown option.*dtype.*OpenAIConfig"):
        load_policy("openai:m@http://127.0.0.1:9/v1", dtype="float32")


def test_openai_spec_splits_model_and_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    policy = load_policy("openai:Qwen/Qwen3-8B@http://user:pw@127.0.0.1:9/v1", concurrency=2)
    assert isinstance(policy, OpenAIPolicy) and isinstance(policy, Policy)
    assert policy.model == "Qwen/Qwen3-8B"
    assert policy.base_url == "http://user:pw@127.0.0.1:9/v1"
    assert policy.client.api_key == "sk-test"
    assert policy.config.concurrency == 2
    monkeypatch.delenv("OPENAI_API_KEY")
    assert load_policy("openai:m@http://127.0.0.1:9/v1").client.api_key == "EMPTY"


def test_alias_and_model_dir_load_the_transformers_backend(smollm2: TransformersPolicy) -> None:
    by_alias = load_policy("smollm2-135m", batch_size=2)
    assert isinstance(by_alias, TransformersPolicy) and by_alias.config.batch_size == 2
    assert by_alias.describe().model == "smollm2-135m"  # not the machine-specific cache path
    assert smollm2.model_dir is not None
    by_dir = load_policy(str(smollm2.model_dir))
    assert by_dir.describe().model == str(smollm2.model_dir)
    assert by_dir.describe().weights_sha256 == by_alias.describe().weights_sha256
    [out] = by_alias.generate([user("What is 2+3?")], SamplingParams(max_new_tokens=1))
    assert out.text == "2"


def test_vllm_missing_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)  # what `import vllm` meets where it is absent
    with pytest.raises(ImportError, match=r"install.sh.*pip install 'spade\[vllm\]'") as caught:
        load_policy("vllm:smollm2-135m")
    assert "\n" not in str(caught.value)
