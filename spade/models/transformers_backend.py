"""Policy backend on a local Hugging Face model with transformers' `generate`."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GenerationConfig,
    LogitsProcessorList,
    StoppingCriteriaList,
)

from spade.models._hf_decoding import BatchDecode, StopOnStrings, TokenPicker
from spade.models.chat_template import render_prompt
from spade.models.policy import (
    Completion,
    PolicyInfo,
    Prompt,
    SamplingParams,
    TokenPrompt,
    ToolSchema,
    check_tools_arg,
    overflow_reply,
)
from spade.models.weights import weights_sha256

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class TransformersConfig:
    """How a local model is loaded and batched. Defaults suit a laptop CPU."""

    device: str = "auto"
    """`auto` (CUDA when available, else CPU), `cpu`, `cuda`, `cuda:1`, ..."""
    dtype: str = "auto"
    """`auto` (bfloat16 on CUDA, float32 on CPU), `float32`, `bfloat16` or `float16`."""
    batch_size: int = 8
    """Conversations generated together; they are sorted by length first to pad less."""

    def resolved_device(self) -> torch.device:
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.device(self.device)

    def resolved_dtype(self, device: torch.device) -> torch.dtype:
        if self.dtype == "auto":
            return torch.bfloat16 if device.type == "cuda" else torch.float32
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be auto or one of {sorted(_DTYPES)}, got {self.dtype!r}")
        return _DTYPES[self.dtype]


class TransformersPolicy:
    """Batched chat generation with a local transformers model (left padding, KV cache)."""

    backend = "transformers"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        config: TransformersConfig | None = None,
        name: str = "",
        model_dir: Path | None = None,
    ) -> None:
        """Wrap an already loaded model (e.g. the one being trained); see `from_pretrained`.

        `name` is what `describe()` reports; `model_dir`, when the weights are files there,
        is what their content hash is computed over.
        """
        self.model = model
        self.model_dir = model_dir
        self.tokenizer = tokenizer
        self.config = config or TransformersConfig()
        if self.config.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.config.batch_size}")
        self.name = name or str(getattr(model, "name_or_path", "")) or type(model).__name__
        if tokenizer.pad_token_id is None:  # padded positions are masked: any token will do
            tokenizer.pad_token = tokenizer.eos_token
        self._generation_config = self._clean_generation_config()
        self._lock = threading.Lock()  # one generate at a time: the model is not re-entrant
        self._weights_sha256: str | None = None
        self.context_overflows = 0
        """Prompts answered empty because they filled the context window (see _overflow)."""

    @classmethod
    def from_pretrained(
        cls, model_dir: str | Path, config: TransformersConfig | None = None, name: str = ""
    ) -> TransformersPolicy:
        config = config or TransformersConfig()
        device = config.resolved_device()
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=config.resolved_dtype(device))
        model.to(device)  # type: ignore[arg-type]  # transformers' stubs miss device
        model.eval()
        return cls(model, tokenizer, config, name=name or str(model_dir), model_dir=Path(model_dir))

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def describe(self) -> PolicyInfo:
        if self._weights_sha256 is None and self.model_dir is not None:
            self._weights_sha256 = weights_sha256(self.model_dir)
        return PolicyInfo(
            backend=self.backend,
            model=self.name,
            weights_sha256=self._weights_sha256,
            dtype=str(self.model.dtype).removeprefix("torch."),
            device=str(self.device),
        )

    def generate(
        self,
        conversations: Sequence[Prompt],
        sampling: SamplingParams,
        tools: Sequence[list[ToolSchema] | None] | None = None,
    ) -> list[Completion]:
        per_conv_tools = check_tools_arg(conversations, tools)
        if not conversations:
            return []
        ids = [
            self.prompt_ids(conv, conv_tools)
            for conv, conv_tools in zip(conversations, per_conv_tools, strict=True)
        ]
        results: list[Completion | None] = [self._overflow(row, sampling) for row in ids]
        # Longest first: similar lengths share a batch (less padding), and running out of
        # memory shows on the first batch rather than the last.
        order = sorted(
            (i for i in range(len(ids)) if results[i] is None), key=lambda i: -len(ids[i])
        )
        generator = self._generator(sampling.seed)
        with self._lock, self._model_set_for_generation():
            for start in range(0, len(order), self.config.batch_size):
                chunk = order[start : start + self.config.batch_size]
                batch = self._generate_batch([ids[i] for i in chunk], sampling, generator)
                for i, completion in zip(chunk, batch, strict=True):
                    results[i] = completion
        return [c for c in results if c is not None]

    def prompt_ids(self, prompt: Prompt, tools: list[ToolSchema] | None = None) -> list[int]:
        """The token ids generation starts from: a token prompt's own, or the rendered chat's
        (tokenised without added special tokens: the template writes its own)."""
        if isinstance(prompt, TokenPrompt):
            return list(prompt.ids)
        text = render_prompt(self.tokenizer, prompt, tools)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _overflow(self, row: list[int], sampling: SamplingParams) -> Completion | None:
        """An empty 'length' completion for a prompt that fills the model's context window.

        A served model rejects such a request (BFCL and ACEBench count the entry failed); a
        local one would run past the positions it was trained on, slowly and into garbage.
        """
        window = self.context_window
        if window is None or len(row) < window:
            return None
        self.context_overflows += 1
        return overflow_reply(self.name, row, window, sampling, self.context_overflows == 1)

    @property
    def context_window(self) -> int | None:
        value = getattr(self.model.config, "max_position_embeddings", None)
        return int(value) if isinstance(value, int) and value > 0 else None

    @torch.inference_mode()
    def _generate_batch(
        self, ids: list[list[int]], sampling: SamplingParams, generator: torch.Generator
    ) -> list[Completion]:
        # Left padding keeps every row's last prompt token at the end, where generation
        # starts. Asked per call, so a tokenizer shared with a trainer keeps its own side.
        enc = self.tokenizer.pad({"input_ids": ids}, padding_side="left", return_tensors="pt")
        enc = enc.to(self.device)
        prompt_len = enc["input_ids"].shape[1]
        picker = TokenPicker(sampling, generator)
        stopper = (
            StopOnStrings(self.tokenizer, sampling.stop, prompt_len, len(ids))
            if sampling.stop
            else None
        )
        generation_config = copy.deepcopy(self._generation_config)
        generation_config.max_new_tokens = sampling.max_new_tokens
        output = self.model.generate(
            **enc,
            generation_config=generation_config,
            logits_processor=LogitsProcessorList([picker]),
            stopping_criteria=StoppingCriteriaList([stopper] if stopper else []),
        )
        decode = BatchDecode(
            tokenizer=self.tokenizer,
            sampling=sampling,
            eos_ids=self._eos_ids(),
            prompts=ids,
            picker=picker,
            stopper=stopper,
        )
        return decode.completions(output[:, prompt_len:].cpu())

    def _generator(self, seed: int | None) -> torch.Generator:
        generator = torch.Generator(device=self.device)
        if seed is None:
            generator.seed()
        else:
            generator.manual_seed(seed)
        return generator

    def _eos_ids(self) -> set[int]:
        eos = self._generation_config.eos_token_id
        return set(eos) if isinstance(eos, list) else {eos} if eos is not None else set()

    def _clean_generation_config(self) -> GenerationConfig:
        """Only the special tokens from the model's generation config, no sampling defaults.

        SamplingParams are the whole recipe: a model's shipped defaults (repetition penalty,
        top_k, ...) would make the same params mean different things per model and backend.
        """
        shipped = getattr(self.model, "generation_config", None)
        eos = getattr(shipped, "eos_token_id", None)
        if eos is None:
            eos = self.tokenizer.eos_token_id
        return GenerationConfig(
            bos_token_id=getattr(shipped, "bos_token_id", None),
            eos_token_id=eos,
            pad_token_id=self.tokenizer.pad_token_id,
            do_sample=False,
            num_beams=1,
        )

    @contextmanager
    def _model_set_for_generation(self) -> Iterator[None]:
        # `generate` fills unset options from `model.generation_config`, so ours is swapped
        # in; and dropout must be off. Both are put back after: the model may be shared
        # with a trainer.
        shipped, was_training = self.model.generation_config, self.model.training
        self.model.generation_config = self._generation_config
        self.model.eval()
        try:
            yield
        finally:
            self.model.generation_config = shipped
            self.model.train(was_training)
