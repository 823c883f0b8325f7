"""`Learner`: the trained policy's state (model, optimizer, step) and its checkpoints.

Rollouts and updates share one live model: `policy()` wraps it for generation, `update()`
trains it. Trained weights and AdamW state are float32 (bfloat16 updates of size lr ~ 1e-6
round away to nothing); with `dtype='bfloat16'` the forward passes run under autocast, and a
LoRA run keeps its frozen base weights in bfloat16.

Under a launcher (`spade.rl.distributed`) rank 0 drives: its `update()` and `load_checkpoint()`
run on every process, the others `follow()` it, and only rank 0 writes files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import torch
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl.trainer.utils import disable_dropout_in_model

from spade.models.builtin import BUILTIN_MODELS, builtin_model_dir
from spade.models.policy import Completion, PolicyInfo, Prompt, SamplingParams, ToolSchema
from spade.models.transformers_backend import TransformersConfig, TransformersPolicy
from spade.rl.checkpoint import (
    MARKER,
    checkpoint_name,
    latest_checkpoint,
    prune_checkpoints,
    rng_state,
    set_rng_state,
    write_atomically,
)
from spade.rl.config import UpdateConfig
from spade.rl.distributed import join_world
from spade.rl.grpo import completion_logprobs, grpo_update
from spade.rl.metrics import UpdateMetrics
from spade.rl.samples import Batch, TrainingSample, fit_sample

_T = TypeVar("_T")
FORMAT_VERSION = 1
WEIGHTS = "trainable.safetensors"
OPTIMIZER = "optimizer.pt"
RNG = "rng.pt"
EXPORT_NOTE = "spade-export.json"


class LearnerError(ValueError):
    """The learner cannot start: its model or device is unusable; the message says why."""


class CheckpointError(LearnerError):
    """A checkpoint does not exist or does not fit this learner; the message says why."""


class Learner:
    """One policy (full fine-tune or LoRA) trained by `update()`, generating via `policy()`."""

    def __init__(self, model_dir: str | Path, config: UpdateConfig | None = None) -> None:
        """`model_dir`: a HF model dir or a built-in alias (`smollm2-135m`)."""
        self.config = config or UpdateConfig()
        self.model_dir = _resolve_model_dir(model_dir)
        self.world = join_world(self.config.device)
        """This process's place in a distributed run: rank 0 drives, the others `follow()`."""
        self.device = self.world.device or resolve_device(self.config.device)
        self.compute_dtype = _compute_dtype(self.config.dtype, self.device)
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = self._load_model()
        self.world.broadcast_parameters(self.model)  # every process starts from rank 0's weights
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(
            trainable, lr=self.config.lr, weight_decay=self.config.weight_decay
        )
        self.step = 0
        """Updates done (one per `update()` call)."""
        self.optimizer_steps = 0
        self._reference_model: Any = None
        self._closed = False

    # -- rollouts and updates -------------------------------------------------------------

    def policy(self, config: TransformersConfig | None = None) -> TransformersPolicy:
        """A Policy generating with the live model: it sees every update at once."""
        model = self.model.get_base_model() if self.config.lora else self.model  # adapters inside
        return _AutocastPolicy(
            model,
            self.tokenizer,
            config or TransformersConfig(device=str(self.device)),
            name=f"{self.model_dir}@{checkpoint_name(self.step)}",
            autocast=self._autocast,
        )

    def update(self, samples: Sequence[TrainingSample]) -> UpdateMetrics:
        """One GRPO update on these samples (see `spade.rl.grpo`); advances `step`.

        On the driver of a distributed run, every process takes part (each runs its share)."""
        self._tell_followers("update", list(samples))
        tokenized = [fit_sample(s, self.config.max_length) for s in samples]
        metrics = grpo_update(
            self.model,
            self.optimizer,
            tokenized,
            self.config,
            pad_id=self.tokenizer.pad_token_id,
            step=self.step,
            optimizer_steps_done=self.optimizer_steps,
            reference=self._reference_logprobs if self.config.beta > 0 else None,
            autocast=self._autocast,
            world=self.world,
        )
        self.step += 1
        self.optimizer_steps += metrics.optimizer_steps
        return metrics

    # -- distributed runs (spade.rl.distributed) ------------------------------------------

    def follow(self) -> None:
        """A follower's (rank > 0) whole work: repeat the driver's `update()` and
        `load_checkpoint()` calls, with the same arguments, until the driver calls `close()`."""
        if self.world.is_main:
            raise RuntimeError("follow() is for ranks > 0 of a distributed run; rank 0 drives")
        calls: dict[str, Callable[..., object]] = {
            "update": self.update,
            "load": self.load_checkpoint,
        }
        while (message := self.world.broadcast_object(None))[0] != "stop":
            calls[message[0]](*message[1:])

    def close(self) -> None:
        """Release the followers (their `follow()` returns). A no-op single-process, on a
        follower and when called again."""
        if not self._closed:
            self._tell_followers("stop")
            self._closed = True

    def _tell_followers(self, *message: Any) -> None:
        """On the driver of a distributed run, have the followers make the same call."""
        if self.world.size == 1 or not self.world.is_main:
            return
        if self._closed:
            raise RuntimeError("this learner was closed: its followers have stopped")
        self.world.broadcast_object(message)

    def _driver_only(self, what: str) -> None:
        # Followers hold the same weights; a second writer would race rank 0 for the files.
        if not self.world.is_main:
            raise RuntimeError(f"{what} runs on rank 0 only (rank {self.world.rank} follows)")

    # -- checkpoints ----------------------------------------------------------------------

    def save_checkpoint(
        self, root: str | Path, extra: Callable[[Path], None] | None = None, keep_last: int = 2
    ) -> Path:
        """Write `root/step-NNNNNN/` atomically and keep only the newest `keep_last`.

        `extra(dir)` writes the caller's own state (env memory, loop state) into the same
        checkpoint before it is published, so everything resumes from one consistent point.
        Rank 0 only in a distributed run (a follower raises RuntimeError).
        """
        self._driver_only("save_checkpoint")

        def fill(tmp: Path) -> None:
            trainable = {n: p.detach().contiguous() for n, p in self._trainable_named()}
            save_file(trainable, str(tmp / WEIGHTS))
            torch.save(self.optimizer.state_dict(), tmp / OPTIMIZER)
            torch.save(rng_state(), tmp / RNG)
            if extra is not None:
                extra(tmp)
            (tmp / MARKER).write_text(json.dumps(self._describe(), indent=2) + "\n")

        path = write_atomically(Path(root) / checkpoint_name(self.step), fill, MARKER)
        prune_checkpoints(root, keep_last)
        return path

    def load_checkpoint(self, path: str | Path) -> Path:
        """Restore weights, optimizer, RNG states and step from a checkpoint dir, or from the
        newest one under a root of checkpoints. Returns the checkpoint dir used. On the driver
        of a distributed run, every process loads it (a path they all can read)."""
        path = Path(path)
        if not (path / MARKER).is_file():
            found = latest_checkpoint(path)
            if found is None:
                raise CheckpointError(f"{path} is not a checkpoint and holds no complete one")
            path = found
        meta = _read(path, lambda: json.loads((path / MARKER).read_text()))
        if meta.get("format_version") != FORMAT_VERSION:
            raise CheckpointError(f"{path}: format_version {meta.get('format_version')} unknown")
        if meta["lora"] != self.config.lora:
            raise CheckpointError(
                f"{path} was trained with lora={meta['lora']}, this learner has "
                f"lora={self.config.lora}: resume with the run's own config"
            )
        # Everything is read before anything is restored: a damaged file leaves this learner
        # as it was and is reported in one line.
        weights = _read(path, lambda: load_file(str(path / WEIGHTS), device=str(self.device)))
        optimizer_state = _read(
            path, lambda: torch.load(path / OPTIMIZER, map_location=self.device, weights_only=True)
        )
        rng = _read(path, lambda: torch.load(path / RNG, weights_only=True))
        self._tell_followers("load", str(path))  # once found and checked: they load it as is
        self._load_trainable(weights, path)
        try:
            self.optimizer.load_state_dict(optimizer_state)
        except (ValueError, KeyError) as exc:
            raise CheckpointError(f"{path / OPTIMIZER} does not fit this model: {exc}") from None
        set_rng_state(rng)
        self.step, self.optimizer_steps = int(meta["step"]), int(meta["optimizer_steps"])
        return path

    def export_hf(self, out_dir: str | Path) -> Path:
        """A plain HF model dir (LoRA merged, tokenizer included) that `spade-eval` loads.
        Rank 0 only in a distributed run (a follower raises RuntimeError)."""
        self._driver_only("export_hf")
        out_dir = Path(out_dir)

        def fill(tmp: Path) -> None:
            if self.config.lora:
                base = self.model.get_base_model()
                state = _merged_state_dict(base)
                if any(t.dtype in _LOW_PRECISION for t in state.values()):
                    # A bf16 base: one float32 file, so no loader rounds the deltas away.
                    state = {k: v.float() for k, v in state.items()}
                base.save_pretrained(tmp, state_dict=state)
                _set_config_dtype(tmp, state)
            else:
                self.model.save_pretrained(tmp)
            self.tokenizer.save_pretrained(tmp)
            note = {**self._describe(), "exported_from": str(self.model_dir)}
            (tmp / EXPORT_NOTE).write_text(json.dumps(note, indent=2) + "\n")

        return write_atomically(out_dir, fill, EXPORT_NOTE)

    # -- weights for a generation engine (spade.rl.weight_sync) ---------------------------

    def named_weights(self) -> Iterator[tuple[str, torch.Tensor]]:
        """The current policy's weights under the base model's HF names (LoRA merged in),
        in the dtype they are trained in: what an inference engine's `load_weights` takes."""
        if self.config.lora:
            yield from _merged_state_dict(self.model.get_base_model()).items()
            return
        for name, tensor in self.model.state_dict().items():
            yield name, tensor.detach()

    def save_adapter(self, out_dir: str | Path) -> Path:
        """The LoRA adapter alone (peft's adapter_config.json + adapter_model.safetensors),
        as vLLM's `/v1/load_lora_adapter` reads it; written atomically."""
        self._driver_only("save_adapter")
        if not self.config.lora:
            raise ValueError("save_adapter needs a LoRA learner (update.lora: true)")
        return write_atomically(
            Path(out_dir), lambda tmp: self.model.save_pretrained(tmp), "adapter_config.json"
        )

    # -- internals ------------------------------------------------------------------------

    def _load_model(self) -> Any:
        # Trained weights in float32; a LoRA base is frozen, so it may stay in compute dtype.
        weights_dtype = self.compute_dtype if self.config.lora else torch.float32
        model = _read(
            self.model_dir,
            lambda: AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=weights_dtype),
        )
        model.to(self.device)  # type: ignore[arg-type]  # transformers' stubs miss device
        disable_dropout_in_model(model)  # dropout would make the first pass's ratio != 1
        if self.config.gradient_checkpointing:
            # Non-reentrant: works with frozen inputs (LoRA) without enable_input_require_grads.
            kwargs = {"use_reentrant": False}
            if hasattr(model, "activation_checkpointing_enable"):  # its name from transformers 5
                model.activation_checkpointing_enable(kwargs)  # type: ignore[operator]  # Module.__getattr__ types it as a Tensor
            else:
                model.gradient_checkpointing_enable(kwargs)
        if not self.config.lora:
            return model
        from peft import LoraConfig, get_peft_model

        lora = LoraConfig(
            r=self.config.lora_r,
            lora_alpha=self.config.lora_alpha,
            lora_dropout=self.config.lora_dropout,
            target_modules=list(self.config.lora_target_modules) or "all-linear",
            task_type="CAUSAL_LM",
        )
        with torch.random.fork_rng(devices=[]):  # seeded adapters, global RNG untouched
            torch.manual_seed(self.config.seed)
            return get_peft_model(model, lora)

    def _autocast(self) -> AbstractContextManager[Any]:
        if self.compute_dtype == torch.float32:
            return nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.compute_dtype)

    def _trainable_named(self) -> list[tuple[str, torch.nn.Parameter]]:
        return [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]

    def _load_trainable(self, tensors: dict[str, torch.Tensor], path: Path) -> None:
        params = dict(self._trainable_named())
        if set(tensors) != set(params):
            missing = sorted(set(params) - set(tensors))
            unexpected = sorted(set(tensors) - set(params))
            raise CheckpointError(
                f"{path / WEIGHTS} does not fit this model (missing {missing[:3]}, "
                f"unexpected {unexpected[:3]}): was it trained from {self.model_dir}?"
            )
        with torch.no_grad():
            for name, param in params.items():
                param.copy_(tensors[name])

    def _reference_logprobs(self, batch: Batch, temperature: float) -> torch.Tensor:
        """Log-probabilities under the initial policy (for the KL term, beta > 0)."""
        if self.config.lora:  # the base model is the initial policy
            with self.model.disable_adapter():
                return completion_logprobs(self.model, batch, temperature)[0]
        if self._reference_model is None:
            ref = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=self.compute_dtype)
            ref.to(self.device)  # type: ignore[arg-type]
            self._reference_model = ref.eval().requires_grad_(False)
        return completion_logprobs(self._reference_model, batch, temperature)[0]

    def _describe(self) -> dict[str, Any]:
        import peft
        import transformers
        import trl

        return {
            "format_version": FORMAT_VERSION,
            "step": self.step,
            "optimizer_steps": self.optimizer_steps,
            "base_model": str(self.model_dir),
            "lora": self.config.lora,
            "config": self.config.as_dict(),
            "versions": {
                "torch": torch.__version__,
                "transformers": transformers.__version__,
                "trl": trl.__version__,
                "peft": peft.__version__,
            },
        }


class _AutocastPolicy(TransformersPolicy):
    """The transformers policy, generating under the learner's autocast (bf16 compute)."""

    def __init__(
        self, *args: Any, autocast: Callable[[], AbstractContextManager[Any]], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._autocast = autocast

    def generate(
        self,
        conversations: Sequence[Prompt],
        sampling: SamplingParams,
        tools: Sequence[list[ToolSchema] | None] | None = None,
    ) -> list[Completion]:
        with self._autocast():  # thread-local, and generate runs in this thread
            return super().generate(conversations, sampling, tools)

    def describe(self) -> PolicyInfo:
        info = super().describe()
        if isinstance(self._autocast(), torch.autocast):
            return replace(info, dtype=f"{info.dtype} (autocast bfloat16)")
        return info


def _read(path: Path, load: Callable[[], _T]) -> _T:
    """`load()`, or a CheckpointError naming the damaged checkpoint in one line."""
    try:
        return load()
    except Exception as exc:  # safetensors, zip, pickle, JSON and OS errors all mean damaged
        first = (str(exc).splitlines() or [""])[0][:200]
        raise CheckpointError(f"{path}: cannot read it ({type(exc).__name__}: {first})") from None


_LOW_PRECISION = (torch.bfloat16, torch.float16)


def _set_config_dtype(model_dir: Path, state: dict[str, torch.Tensor]) -> None:
    """config.json's dtype: what the weights written next to it are (a loader's `auto`)."""
    dtypes = {t.dtype for t in state.values()}
    if len(dtypes) != 1:
        return
    path = model_dir / "config.json"
    config = json.loads(path.read_text())
    config["dtype"] = str(dtypes.pop()).removeprefix("torch.")
    path.write_text(json.dumps(config, indent=2) + "\n")


def _merged_state_dict(base: Any) -> dict[str, torch.Tensor]:
    """The base model's weights with each LoRA delta added, under the original key names.

    A merged weight stays float32 where its base is held in bf16 (`dtype: bfloat16` with
    LoRA): rounded back to bf16, a delta below ~1/256 of the weight it is added to is lost,
    and an engine synced with such weights would keep sampling the base policy. The engine
    casts on load to its own dtype."""
    from peft.tuners.lora import LoraLayer

    state = {}
    for name, module in base.named_modules():
        if not isinstance(module, LoraLayer):
            continue
        layer: Any = module  # get_delta_weight lives on the concrete layer types
        weight = layer.get_base_layer().weight
        merged = weight.float()
        for adapter in layer.active_adapters:
            merged = merged + layer.get_delta_weight(adapter).float()
        state[f"{name}.weight"] = (
            merged if weight.dtype in _LOW_PRECISION else merged.to(weight.dtype)
        )
    for key, value in base.state_dict().items():
        if "lora_" in key:
            continue
        key = key.replace(".base_layer.", ".")
        state.setdefault(key, value)
    return state


def _resolve_model_dir(model_dir: str | Path) -> Path:
    if str(model_dir) in BUILTIN_MODELS:
        return builtin_model_dir(str(model_dir))
    path = Path(model_dir).expanduser()
    if not (path / "config.json").is_file():
        raise LearnerError(
            f"model {path}: not a Hugging Face model dir (no config.json) nor a built-in alias "
            f"({', '.join(sorted(BUILTIN_MODELS))})"
        )
    return path


def resolve_device(name: str) -> torch.device:
    """The torch device `update.device` names; LearnerError when this machine has none."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError as exc:
        raise LearnerError(f"update.device {name!r}: {exc}") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise LearnerError(f"update.device {name!r}: this machine has no usable CUDA device")
    return device


def _compute_dtype(name: str, device: torch.device) -> torch.dtype:
    if name == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16}[name]
