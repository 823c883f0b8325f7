"""`UpdateConfig`: every knob of the policy update, with defaults that run on a laptop CPU."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

LossType = Literal["dapo", "grpo"]
DType = Literal["auto", "float32", "bfloat16"]


@dataclass(frozen=True)
class UpdateConfig:
    """The GRPO-style update of SPADE's one shared policy (see `spade.rl.grpo`)."""

    lr: float = 2e-6
    """AdamW learning rate; 1e-6..1e-5 suits full fine-tunes, LoRA takes ~10x more."""
    weight_decay: float = 0.0
    """AdamW decoupled weight decay (0: an update with no signal leaves weights untouched)."""
    warmup_steps: int = 0
    """Optimizer steps over which the learning rate rises linearly from 0 to `lr`."""
    max_grad_norm: float = 1.0
    """Gradients are rescaled to at most this global L2 norm before each optimizer step."""
    epsilon: float = 0.2
    """Lower clip range: the ratio is clipped at 1 - epsilon (for negative advantages)."""
    epsilon_high: float = 0.28
    """Upper clip range: the ratio is clipped at 1 + epsilon_high (DAPO's clip-higher)."""
    loss_type: LossType = "dapo"
    """'dapo': mean over all completion tokens of an optimizer step (TRL's default);
    'grpo': mean over tokens within each completion, then over completions."""
    beta: float = 0.0
    """KL(policy || initial policy) coefficient; 0 loads no reference model."""
    num_iterations: int = 1
    """Optimisation passes over each batch; above 1 the clipped ratio departs from 1."""
    micro_batch_size: int = 4
    """Completions per forward/backward pass; lower it when memory runs out."""
    grad_accum: int | None = None
    """Micro-batches per optimizer step; None puts a whole `update()` batch in one step."""
    max_length: int = 2048
    """Most tokens per sample (prompt + completion); prompts are cut from the left."""
    temperature: float = 1.0
    """The rollouts' sampling temperature: logits are divided by it, as TRL does."""
    role_temperatures: dict[str, float] = dataclasses.field(default_factory=dict)
    """A role's own sampling temperature where it differs from `temperature` (e.g.
    `{"designer": 0.4}`): each role's tokens are scored under the temperature they were
    sampled at. spade-train fills it from `designer.temperature` and `agent.temperature`."""
    dtype: DType = "auto"
    """Compute dtype: 'auto' (bfloat16 on CUDA, float32 on CPU), 'float32' or 'bfloat16'.
    Trained weights and optimizer state stay float32; bfloat16 runs under autocast."""
    device: str = "auto"
    """'auto' (CUDA when available, else CPU), 'cpu', 'cuda', 'cuda:1', ...; under a launcher
    (accelerate launch, torchrun) 'auto' or 'cuda' is each process's cuda:LOCAL_RANK."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass: less memory, ~30% more time."""
    lora: bool = False
    """Train LoRA adapters (peft) instead of every weight."""
    lora_r: int = 16
    """LoRA rank."""
    lora_alpha: int = 32
    """LoRA scaling numerator (the update is scaled by alpha / r)."""
    lora_dropout: float = 0.0
    """Dropout on the LoRA path; 0 keeps the first pass's ratio exactly 1."""
    lora_target_modules: tuple[str, ...] = ()
    """Module names to adapt (e.g. q_proj, v_proj); empty means every linear layer."""
    tis_cap: float | None = None
    """Truncated importance sampling: weight each token's loss by
    min(exp(learner logp - sampler logp), tis_cap), correcting for a sampler whose numerics
    differ from the learner's (vLLM, another dtype); None: off."""
    mismatch_probe: int = 8
    """Samples scored for the rollout-vs-learner mismatch when no sample has signal."""
    role_grad_norms: bool = True
    """Report each role's own gradient norm (holds one extra gradient buffer meanwhile)."""
    seed: int = 0
    """Seeds LoRA's initialisation and the batch order when a batch spans several steps."""

    def __post_init__(self) -> None:
        positive = ("lr", "max_grad_norm", "temperature", "micro_batch_size", "max_length")
        for name in positive:
            if not getattr(self, name) > 0:
                raise ValueError(f"UpdateConfig.{name} must be > 0, got {getattr(self, name)!r}")
        for name in ("weight_decay", "warmup_steps", "epsilon", "epsilon_high", "beta"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"UpdateConfig.{name} must be >= 0, got {value!r}")
        for role, value in self.role_temperatures.items():
            if role not in ("designer", "agent") or not value > 0:
                raise ValueError(
                    f"UpdateConfig.role_temperatures: want designer/agent -> a temperature > 0, "
                    f"got {role!r}: {value!r}"
                )
        if self.tis_cap is not None and not self.tis_cap >= 1:
            raise ValueError(f"UpdateConfig.tis_cap must be >= 1 or None, got {self.tis_cap!r}")
        if self.mismatch_probe < 0:
            raise ValueError(f"UpdateConfig.mismatch_probe must be >= 0, got {self.mismatch_probe}")
        if self.epsilon >= 1:
            raise ValueError(f"UpdateConfig.epsilon must be < 1, got {self.epsilon}")
        if self.num_iterations < 1:
            raise ValueError(f"UpdateConfig.num_iterations must be >= 1, got {self.num_iterations}")
        if self.grad_accum is not None and self.grad_accum < 1:
            raise ValueError(f"UpdateConfig.grad_accum must be >= 1 or None, got {self.grad_accum}")
        if self.loss_type not in ("dapo", "grpo"):
            raise ValueError(
                f"UpdateConfig.loss_type must be 'dapo' or 'grpo', not {self.loss_type!r}"
            )
        if self.dtype not in ("auto", "float32", "bfloat16"):
            raise ValueError(
                f"UpdateConfig.dtype must be 'auto', 'float32' or 'bfloat16', not {self.dtype!r}"
            )
        if self.lora and (self.lora_r < 1 or self.lora_alpha <= 0):
            raise ValueError(
                f"UpdateConfig.lora_r must be >= 1 and lora_alpha > 0, got {self.lora_r}, "
                f"{self.lora_alpha}"
            )
        object.__setattr__(self, "lora_target_modules", tuple(self.lora_target_modules))

    def temperature_of(self, role: str) -> float:
        """The temperature `role`'s tokens were sampled at (and are scored under)."""
        return self.role_temperatures.get(role, self.temperature)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> UpdateConfig:
        """From a mapping (e.g. a YAML section); unknown keys are an error that names them."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(
                f"unknown UpdateConfig field(s): {', '.join(unknown)}; "
                f"valid: {', '.join(sorted(known))}"
            )
        try:
            # Typed like the rest of the run config: "1e-5" (a string to PyYAML) becomes a
            # float, `lora: maybe` is an error rather than a truthy string.
            return TypeAdapter(cls).validate_python(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            message = first["msg"].removeprefix("Value error, ")
            if not first["loc"]:  # raised by __post_init__, which names the field itself
                raise ValueError(message) from None
            field = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"UpdateConfig.{field}: {message}, got {first['input']!r}") from None

    def as_dict(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["lora_target_modules"] = list(self.lora_target_modules)
        return values
