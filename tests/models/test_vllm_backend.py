"""The in-process vLLM backend on the CPU build, against the transformers backend.

One engine (smollm2-135m, float32, LoRA enabled) is started for the whole module: about 20 s on
an idle 2-core machine, a minute or more on a busy one. Every reply is compared with the
transformers backend's on the same weights: identical token ids and text, logprobs within
LOGPROB_TOLERANCE.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from spade.models import Completion, SamplingParams, TransformersPolicy, builtin_model_dir
from spade.models.load import ModelSpecError, load_policy
from spade.models.policy import TokenPrompt
from spade.models.vllm_backend import EngineError, VLLMConfig, VLLMPolicy
from tests.data import DATA_DIR
from tests.models.conftest import (
    GREEDY,
    QUESTIONS,
    assert_same_replies,
    teacher_forced_logprobs,
    user,
)

WINDOW = 512
GREEDY_LOGPROBS = SamplingParams(max_new_tokens=16, logprobs=True)


@pytest.fixture(scope="module")
def engine() -> Iterator[VLLMPolicy]:
    config = VLLMConfig(max_model_len=WINDOW, enable_lora=True, max_lora_rank=8,
                        cpu_kv_cache_gib=0.5)  # fmt: skip
    policy = VLLMPolicy(builtin_model_dir("smollm2-135m"), config, name="smollm2-135m")
    yield policy
    policy.close()


@pytest.fixture(scope="module")
def reference(smollm2: TransformersPolicy) -> list[Completion]:
    """QUESTIONS answered greedily by transformers, with logprobs."""
    return smollm2.generate([user(q) for q in QUESTIONS], GREEDY_LOGPROBS)


def test_greedy_replies_and_logprobs_match_transformers(
    engine: VLLMPolicy, reference: list[Completion]
) -> None:
    import vllm

    assert vllm.__version__ == "0.32.0"
    got = engine.generate([user(q) for q in QUESTIONS], GREEDY_LOGPROBS)
    assert_same_replies(got, reference)
    assert got[0].token_ids[-1] == engine.tokenizer.eos_token_id  # the end token, as sampled
    info = engine.describe()
    assert (info.backend, info.model, info.dtype, info.device) == (
        "vllm", "smollm2-135m", "float32", "cpu"
    )  # fmt: skip


def test_token_prompts_and_chats_are_the_same_prompt(
    engine: VLLMPolicy, greedy_answers: list[Completion]
) -> None:
    chats = engine.generate([user(q) for q in QUESTIONS], GREEDY)
    ids = [TokenPrompt(c.prompt_token_ids or []) for c in greedy_answers]
    tokens = engine.generate(ids, GREEDY)
    assert [c.token_ids for c in tokens] == [c.token_ids for c in chats]
    assert [c.token_ids for c in chats] == [c.token_ids for c in greedy_answers]


def test_callers_on_several_threads_share_the_engine(
    engine: VLLMPolicy, greedy_answers: list[Completion]
) -> None:
    """spade-eval's side-by-side benchmarks: each thread gets its own replies, in order, the
    same as one call alone, while the engine decodes them together (a long request on one
    thread does not hold back the others: each returns when its own requests are done)."""
    from concurrent.futures import ThreadPoolExecutor

    long = SamplingParams(max_new_tokens=96)
    calls = [([user(q)], GREEDY) for q in QUESTIONS] + [([user(QUESTIONS[0])], long)]
    with ThreadPoolExecutor(len(calls)) as pool:
        got = list(pool.map(lambda call: engine.generate(*call), calls))
    assert [c[0].token_ids for c in got[:-1]] == [c.token_ids for c in greedy_answers]
    alone = engine.generate([user(QUESTIONS[0])], long)
    assert got[-1][0].token_ids == alone[0].token_ids
    assert not engine._waiting  # every finished request went to its caller


def test_a_reply_cut_at_max_tokens_has_no_end_token(engine: VLLMPolicy) -> None:
    [out] = engine.generate([user(QUESTIONS[1])], SamplingParams(max_new_tokens=3))
    assert out.finish_reason == "length" and len(out.token_ids or []) == 3
    assert engine.tokenizer.eos_token_id not in (out.token_ids or [])


def test_stop_strings_cut_the_text(engine: VLLMPolicy, greedy_answers: list[Completion]) -> None:
    full = greedy_answers[1].text
    stop = full.split()[2]
    [out] = engine.generate([user(QUESTIONS[1])], SamplingParams(max_new_tokens=16, stop=(stop,)))
    assert out.finish_reason == "stop" and out.text == full[: full.index(stop)]


def test_sampled_logprobs_are_under_the_temperature(
    engine: VLLMPolicy, smollm2: TransformersPolicy
) -> None:
    sampling = SamplingParams(max_new_tokens=8, temperature=0.7, seed=3, logprobs=True)
    outs = engine.generate([user(q) for q in QUESTIONS[:2]], sampling)
    again = engine.generate([user(q) for q in QUESTIONS[:2]], sampling)
    assert [c.token_ids for c in outs] == [c.token_ids for c in again]  # seeded
    for out in outs:
        want = teacher_forced_logprobs(smollm2, out, temperature=0.7)
        assert out.logprobs is not None
        assert max(abs(a - b) for a, b in zip(out.logprobs, want, strict=True)) < 1e-4


def test_logprobs_with_top_p_are_refused(engine: VLLMPolicy) -> None:
    with pytest.raises(ValueError, match="renormalised over the nucleus"):
        engine.generate([user("Hi")], SamplingParams(temperature=1, top_p=0.9, logprobs=True))


def test_a_prompt_that_fills_the_window_is_answered_empty(engine: VLLMPolicy) -> None:
    long = TokenPrompt([engine.tokenizer.bos_token_id or 1] * WINDOW)
    with pytest.warns(UserWarning, match="fills the 512-token context window"):
        empty, fine = engine.generate([long, TokenPrompt((1, 2))], SamplingParams(max_new_tokens=2))
    assert (empty.text, empty.finish_reason, empty.token_ids) == ("", "length", [])
    assert fine.completion_tokens == 2


def test_a_lora_adapter_answers_like_the_merged_model(
    engine: VLLMPolicy, lora_adapter_dir: Path, lora_merged: TransformersPolicy
) -> None:
    conversations = [user(q) for q in QUESTIONS]
    base = engine.generate(conversations, GREEDY)
    engine.set_lora_adapter(lora_adapter_dir)
    try:
        adapted = engine.generate(conversations, GREEDY_LOGPROBS)
        assert engine.describe().weights_sha256 is None  # the files no longer say what answers
    finally:
        engine.set_lora_adapter(None)
    assert [c.token_ids for c in adapted] != [c.token_ids for c in base]
    assert_same_replies(adapted, lora_merged.generate(conversations, GREEDY_LOGPROBS))
    assert [c.token_ids for c in engine.generate(conversations, GREEDY)] == [
        c.token_ids for c in base
    ]


def test_load_weights_syncs_a_full_fine_tune(
    engine: VLLMPolicy, perturbed: TransformersPolicy, smollm2: TransformersPolicy
) -> None:
    conversations = [user(q) for q in QUESTIONS]
    assert engine.in_process
    engine.load_weights(perturbed.model.state_dict().items())
    try:
        synced = engine.generate(conversations, GREEDY_LOGPROBS)
        assert engine.describe().weights_sha256 is None
    finally:
        engine.load_weights(smollm2.model.state_dict().items())  # as the other tests expect
    assert_same_replies(synced, perturbed.generate(conversations, GREEDY_LOGPROBS))
    restored = engine.generate(conversations, GREEDY)
    assert [c.token_ids for c in restored] == [
        c.token_ids for c in smollm2.generate(conversations, GREEDY)
    ]


def test_lora_on_an_engine_without_it_is_refused(tmp_path: Path) -> None:
    policy = object.__new__(VLLMPolicy)
    policy.config = VLLMConfig()
    with pytest.raises(EngineError, match="started without LoRA"):
        policy.set_lora_adapter(tmp_path)


def unloadable_model(directory: Path) -> Path:
    """A model dir whose config names an architecture vLLM does not have."""
    config = json.loads((builtin_model_dir("smollm2-135m") / "config.json").read_text())
    config.update(architectures=["NoSuchModelForCausalLM"], model_type="no-such-model")
    directory.mkdir(exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config))
    return directory


def test_a_model_dir_vllm_cannot_load_is_one_line(tmp_path: Path, engine: VLLMPolicy) -> None:
    unloadable_model(tmp_path)
    with pytest.raises(ModelSpecError, match="vLLM cannot load") as caught:
        load_policy(f"vllm:{tmp_path}")
    assert "\n" not in str(caught.value)


def test_spade_eval_on_a_model_vllm_cannot_load_is_one_line_with_benchmarks_side_by_side(
    tmp_path: Path,
) -> None:
    # The engine starts in the first benchmark thread that misses the cache; the others get
    # the same error, none starts a second engine beside the wreck of the first.
    import subprocess
    import sys

    model = unloadable_model(tmp_path / "model")
    command = [sys.executable, "-m", "spade.cli.eval", "--checkpoint", f"vllm:{model}",
               "--benchmarks", "gsm8k,bbh,math500", "--limit", "1", "--no-cache",
               "--data-dir", str(DATA_DIR), "--output", str(tmp_path / "out")]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "vLLM cannot load" in errors[0], result.stderr[-2000:]
    assert "For further information" not in errors[0] and "Fatal" not in result.stderr


def test_spade_evals_options_are_accepted() -> None:
    # spade-eval passes batch_size to every backend (it once stopped vllm: with "unknown
    # option(s) batch_size for VLLMConfig").
    with pytest.raises(ModelSpecError, match="not an existing model dir"):
        load_policy("vllm:/nonexistent/model", batch_size=8)
    args = VLLMConfig(batch_size=8).engine_args(on_cpu=True)
    assert args["max_num_seqs"] == 8 and args["dtype"] == "float32"
    assert args["enforce_eager"] is True and args["kv_cache_memory_bytes"] == 2 * 2**30
    assert args["generation_config"] == "vllm" and args["logprobs_mode"] == "processed_logprobs"
    gpu = VLLMConfig().engine_args(on_cpu=False)
    assert gpu["dtype"] == "auto" and "enforce_eager" not in gpu and "max_num_seqs" not in gpu


def test_a_deferred_engine_starts_at_the_first_prompt_the_cache_does_not_answer(
    tmp_path: Path, engine: VLLMPolicy
) -> None:
    import threading

    from spade.rollout import GenRequest
    from spade.rollout.cache import CompletionCache
    from spade.rollout.responders import PolicyResponder

    def deferred() -> VLLMPolicy:
        policy = load_policy("vllm:smollm2-135m", defer_start=True, cpu_kv_cache_gib=0.5)
        assert isinstance(policy, VLLMPolicy)
        return policy

    request = GenRequest("test", "q0", tuple(user(QUESTIONS[0])), GREEDY)
    expected = engine.generate([user(QUESTIONS[0])], GREEDY)[0].text
    cache = CompletionCache(tmp_path / "completions.sqlite")
    first = deferred()
    info = first.describe()  # the recorded facts need no engine
    assert not first.started and info.dtype == "float32" and info.weights_sha256
    answers: list[list[list[Completion]]] = []
    # spade-eval's benchmarks ask from worker threads: the engine starts in one of them.
    worker = threading.Thread(target=lambda: answers.append(
        PolicyResponder(first, "key", cache)([request])))  # fmt: skip
    worker.start()
    worker.join()
    assert first.started and answers[0][0][0].text == expected
    first.close()
    again = deferred()  # a re-run: every prompt in the cache, so no engine at all
    assert PolicyResponder(again, "key", cache)([request])[0][0].text == expected
    assert not again.started
