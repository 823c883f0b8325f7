"""spade-train configuration: typed, every field documented, laptop defaults, loaded from YAML.

The defaults are a real but small self-play run of the embedded 135M model on a 2-core CPU
(minutes). Scaling up is configuration: a bigger `model`, more `iterations`, designs and
plays, `update.device: cuda`, rollouts on vLLM (`generation.backend: vllm` in this process,
or `server` for a `vllm serve` endpoint) and updates on several GPUs (`accelerate launch`).

A field added here takes a default that keeps the behaviour of every recorded experiment unit
(spade.experiments): they lack the field and agree with their plan only then. Where a better
default for new runs changes behaviour, the value that keeps it goes in `PRIOR_VALUES`, and a
recipe that recorded units ran sets that value (the identity check reads a missing field as it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from spade.envs.scaffold import Scaffold
from spade.procedural import POOL_TASKS, SchedulerConfig
from spade.rl.config import UpdateConfig
from spade.rl.sft import SftConfig
from spade.sandbox import SandboxConfig
from spade.selfplay.memory import COLD_START_SUITE
from spade.selfplay.rewards import DESIGNER_REWARDS, NEEDS_REGRET, reward_kinds

Mode = Literal["spade", "fixed"]
EnvKind = Literal["game", "reasoning", "tool_use"]
ENV_KINDS: tuple[EnvKind, ...] = ("game", "reasoning", "tool_use")
GenerationBackend = Literal["auto", "live", "vllm", "server"]
WeightSync = Literal["auto", "lora_adapter", "reload", "nccl"]


UPDATE_DEFAULTS: dict[str, Any] = {"lr": 2e-6, "micro_batch_size": 2, "max_length": 2048}
"""The update settings of the laptop default run (the rest are UpdateConfig's defaults)."""


PRIOR_VALUES: dict[str, Any] = {"agent.refill_rounds": 0}
"""Fields whose default changed the behaviour of runs from before the field existed, each with
the value that keeps that behaviour: what a recorded experiment unit, which lacks the field,
ran (`prior_config`)."""


class ConfigError(ValueError):
    """A config file or field is wrong; the message names it."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DesignerConfig(_Strict):
    designs_per_iteration: int = Field(2, ge=1, description="design prompts per iteration")
    group_size: int = Field(2, ge=1, description="completions per design prompt (GRPO group)")
    repair_attempts: int = Field(1, ge=0, description="extra attempts after a failed check")
    max_gen_toks: int = Field(
        512,
        ge=64,
        description="token budget of one env source; a laptop default (a 2-core CPU writes ~2-4 "
        "tok/s per sequence); seed envs are 730-4400 tokens, so raise it on a GPU",
    )
    temperature: float = Field(1.0, ge=0.0, description="designer sampling temperature")
    kinds: list[EnvKind] = Field(default_factory=lambda: list(ENV_KINDS), description="env kinds")
    balanced_kinds: bool = Field(
        False,
        description="each kind once in every len(kinds) requests of an iteration (shuffled), "
        "instead of independent draws; measured once (the spade-kit2 run of docs/lab-notebook.md, "
        "2026-12-03): no more iterations with a designer gradient than independent draws",
    )
    skills: list[str] = Field(
        default_factory=lambda: [
            "deduction",
            "search",
            "planning",
            "algorithm execution",
            "information gathering",
            "arithmetic",
        ],
        description="target skills, sampled uniformly",
    )
    difficulties: list[str] = Field(default_factory=lambda: ["easy", "medium", "hard"])
    known_designs: str | list[str] | None = Field(
        None,
        description="JSONL of designer examples (a warm start's data/designer.jsonl) or a "
        "folder of env .py files, or a list of either: a design that near-duplicates one of "
        "them is rejected (a memorised warm-start env is not a design)",
    )
    scaffold: Scaffold = Field(
        "none",
        description="'text': the designer writes only setup/act/solution of a subclass of the "
        "text-env scaffold (spade.envs.scaffold), which the loop puts in front of its code; "
        "for small models, text kinds only. 'none': the complete env file, as the paper",
    )
    hint_attempts: int = Field(2, ge=1, description="hint generations before giving up")
    hint_max_gen_toks: int = Field(160, ge=16)

    @model_validator(mode="after")
    def _scaffold_kinds(self) -> DesignerConfig:
        if self.scaffold == "text" and "tool_use" in self.kinds:
            raise ValueError("scaffold 'text' writes text envs: leave tool_use out of kinds")
        return self


class AgentConfig(_Strict):
    plays: int = Field(
        4,
        ge=1,
        description="K: plays without hint, and K with (same seeds); 4 so that an env's plays "
        "differ in return often enough to give the agent a gradient (advantages are centred "
        "within an env's plays)",
    )
    turn_cap: int = Field(6, ge=1, description="most agent turns per episode")
    max_gen_toks: int = Field(64, ge=8, description="token budget of one agent reply")
    temperature: float = Field(1.0, ge=0.0)
    replay_envs: int = Field(
        1,
        ge=0,
        description="envs from memory (or the cold-start suite) the agent also plays each "
        "iteration; 0 is the paper's setting, 1 keeps a small model's agent learning while its "
        "designer still writes few valid envs",
    )
    envs_per_iteration: int | None = Field(
        4,
        ge=1,
        description="spade mode: replayed envs fill each iteration up to this many envs played "
        "(at least replay_envs), so the agent plays as many as a fixed-mode run "
        "(designs_per_iteration x group_size) whatever the designer's validity; None: "
        "replay_envs alone",
    )
    hinted_plays: bool = Field(
        True,
        description="also play each env K times with its hint (regret needs them); a fixed "
        "baseline without a designer uses regret only as a metric, and skipping them halves "
        "its rollouts",
    )
    refill_rounds: int = Field(
        2,
        ge=0,
        description="dynamic sampling (DAPO): up to this many extra rounds, each playing a "
        "fresh env of the replay pool (unhinted) for every env whose plays all returned the "
        "same and so give the agent no gradient; the first round's plays alone make the "
        "designer's rewards, memory and env metrics. 0: off (every run before the field)",
    )
    fit_turn_cap: bool = Field(
        False,
        description="replay (and, in fixed mode, play) only the suite envs whose stated turn "
        "budget is at most turn_cap: a longer env's plays are mostly cut by the cap, and a "
        "truncated episode is masked from the update",
    )


class CorpusConfig(_Strict):
    source: str | None = Field(None, description="JSONL/Parquet path, hf:NAME, or None = stdlib")
    max_words: int = Field(300, ge=20, description="document truncation budget")
    min_words: int = Field(50, ge=0)


class MemoryConfig(_Strict):
    capacity: int = Field(200, ge=1, description="FIFO bound")
    references: int = Field(2, ge=0, description="reference envs in the designer prompt")
    excerpt_chars: int = Field(2000, ge=200)
    cold_start_suite: str = Field(
        COLD_START_SUITE, description="references before memory (its train split only)"
    )


class PoolConfig(_Strict):
    """The adaptive pool (RLVE): procedural tasks beside the suite's envs in fixed mode, and
    a difficulty ceiling per env with levels that rises as the policy solves its level."""

    tasks: dict[str, int] = Field(
        default_factory=lambda: dict(POOL_TASKS),
        description="Reasoning-Gym tasks added to the fixed baseline's pool as multi-turn envs "
        "(spade.procedural), each with the number of its curriculum's levels to use; "
        "spade.procedural.POOL_TASKS is the shipped pool",
    )
    attempts: int = Field(3, ge=1, description="answers a procedural episode allows")
    schedule_levels: bool = Field(
        True,
        description="play every env that has difficulty levels (suite envs of spade-seed@1.2.0, "
        "procedural tasks) at a level the scheduler draws; False: at its default, top level",
    )
    scheduler: SchedulerConfig = Field(
        default_factory=SchedulerConfig, description="the ceiling rule and its constants"
    )


class BootstrapConfig(_Strict):
    """The agent bootstrap (spade.selfplay.bootstrap): a short agent SFT on teacher play
    before a run that starts from a built-in model, whose replies never use an env's action
    syntax and so never carry gradient. The defaults were measured in
    experiments/plain-train-bootstrap: 132 examples, 17 optimizer steps, an agent gradient in
    5 of 6 iterations of two plain spade-train runs (2 and 3 per env or task: 1 of 3)."""

    agent: Literal["auto", "off"] = Field(
        "auto",
        description="auto: bootstrap when `model` is a built-in alias (a model directory, a "
        "warm start or checkpoint, is used as it is); off: never",
    )
    episodes_per_env: int = Field(6, ge=1, description="teacher episodes per train env")
    levels: list[int] = Field(
        default_factory=lambda: [0],
        min_length=1,
        description="the levels those episodes take in turn",
    )
    pool_episodes_per_task: int = Field(
        6, ge=0, description="reference-answer episodes per task of `pool.tasks`"
    )
    sft: dict[str, Any] = Field(
        default_factory=lambda: {
            "epochs": 1,
            "lr": 1e-4,
            "batch_size": 1,
            "grad_accum": 8,
            "logging_steps": 1,
        },
        description="spade.rl.sft.SftConfig fields of the bootstrap's fine-tune",
    )

    @field_validator("sft")
    @classmethod
    def _sft_fields(cls, sft: dict[str, Any]) -> dict[str, Any]:
        # Checked now, not after the teacher episodes have been played for minutes.
        try:
            SftConfig(**sft)
        except TypeError as exc:  # an unknown field
            raise ValueError(str(exc).removeprefix("SftConfig.__init__() got an ")) from None
        return sft


class RewardConfig(_Strict):
    """The designer's reward (spade.selfplay.rewards) and every constant of it; the defaults
    are the reference code's: blend = 0.6 · plateau(w) + 0.4 · clip(regret / 0.15, 0, 1),
    plateau(w) = 1 on [0.4, 0.6], falling to 0 at 0.25 outside."""

    model_config = ConfigDict(allow_inf_nan=False)

    kind: str = Field(
        "blend",
        description=f"designer reward, one of {reward_kinds()} (spade.selfplay.rewards."
        "DESIGNER_REWARDS): the first is the paper's default, the others its ablations",
    )
    plateau_low: float = Field(
        0.4, ge=0.0, le=1.0, description="lower edge of the win-rate band scoring a full plateau"
    )
    plateau_high: float = Field(
        0.6, ge=0.0, le=1.0, description="upper edge of the win-rate band scoring a full plateau"
    )
    plateau_width: float = Field(
        0.25, gt=0.0, description="distance outside the band at which plateau(w) reaches 0"
    )
    w_plateau: float = Field(0.6, ge=0.0, description="blend weight of the plateau term")
    w_regret: float = Field(0.4, ge=0.0, description="blend weight of the regret term")
    regret_scale: float = Field(
        0.15, gt=0.0, description="regret at which the blend's regret term saturates at 1"
    )
    ema_alpha: float = Field(
        0.05,
        gt=0.0,
        le=1.0,
        description="step of the slow EMA of each skill's win rate (learning_potential): "
        "ema ← (1 − alpha) · ema + alpha · w",
    )
    invalid_penalty: float | None = Field(
        None, description="designer reward of an invalid env; None = no gradient"
    )

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        if kind not in DESIGNER_REWARDS:
            raise ValueError(f"unknown designer reward {kind!r}; use one of {reward_kinds()}")
        return kind

    @model_validator(mode="after")
    def _band_and_weights(self) -> RewardConfig:
        if self.plateau_low > self.plateau_high:
            raise ValueError(
                f"plateau_low ({self.plateau_low}) must not exceed plateau_high "
                f"({self.plateau_high})"
            )
        if self.w_plateau == self.w_regret == 0.0:
            raise ValueError("w_plateau and w_regret are both 0: the blend would score 0 always")
        return self


class GenerationConfig(_Strict):
    """Where rollouts (designs, hints, agent turns) are generated, and how the trained weights
    reach that place after each update (see `spade.selfplay.generation`)."""

    backend: GenerationBackend = Field(
        "auto",
        description="auto (default): vllm where vLLM is installed and the update runs in one "
        "process (2.3x faster per iteration on a 2-core CPU, benchmarks/perf/vllm_speed.py), "
        "else live; live: the learner's own model (transformers; CPU or GPU); vllm: an "
        "in-process vLLM engine (CPU or GPU, one training process), weights pushed after each "
        "update; server: a `vllm serve` at base_url, or without one a server the run starts "
        "on 127.0.0.1 and stops at its end (its log in RUN_DIR/vllm-serve.log)",
    )
    base_url: str | None = Field(
        None,
        description="server: the endpoint, e.g. http://127.0.0.1:8000/v1; None: the run "
        "starts and owns one on its model",
    )
    served_model: str | None = Field(
        None, description="server: the base model's name there; default its first /v1/models"
    )
    weight_sync: WeightSync = Field(
        "auto",
        description="server: lora_adapter (update.lora runs: each update's adapter is loaded "
        "with POST /v1/load_lora_adapter; the server needs --enable-lora and "
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True), reload (full weights written to sync_dir and "
        "re-read with vLLM's reload_weights; the server needs VLLM_SERVER_DEV_MODE=1), nccl "
        "(full weights over NCCL through TRL's VLLMClient; the server at base_url needs "
        '--weight-transfer-config \'{"backend": "nccl"}\' and VLLM_SERVER_DEV_MODE=1), '
        "auto = lora_adapter for LoRA runs, else reload on the managed server, nccl at base_url",
    )
    sync_dir: str | None = Field(
        None,
        description="lora_adapter, reload: where adapters and weights are written, a "
        "path the server can read; default RUN_DIR/sync",
    )
    concurrency: int = Field(32, ge=1, description="server: requests in flight at once")
    timeout_s: float = Field(600.0, gt=0, description="server: seconds per request")
    vllm: dict[str, Any] = Field(
        default_factory=dict,
        description="vllm, and server without base_url: spade.models.vllm_backend.VLLMConfig "
        "fields; gpu_memory_utilization defaults to 0.3 here, leaving the GPU's rest to the "
        "update",
    )

    @model_validator(mode="after")
    def _nccl_needs_an_endpoint(self) -> GenerationConfig:
        # The managed server is not set up for NCCL weight transfer: it takes `reload`.
        if self.backend == "server" and self.weight_sync == "nccl" and not self.base_url:
            raise ValueError(
                "weight_sync 'nccl' needs base_url (a server started for NCCL "
                "weight transfer); the managed server syncs with reload"
            )
        return self


class RayConfig(_Strict):
    """Where the agent's env workers run: in this process's sandbox, or on Ray actors
    (`spade.distributed.EnvHosts`; env code then runs in the sandbox of the actor's node)."""

    env_workers: int = Field(
        0,
        ge=0,
        description="Ray actors hosting the sandboxed env workers of the agent's episodes (taken "
        "in turn, one per episode); 0 = no Ray, env workers start in this process's sandbox",
    )
    address: str | None = Field(
        None,
        description="the cluster: HOST:PORT, auto (the one `ray start` made on this "
        "machine), or None = a local cluster this run starts",
    )
    cpus_per_env_worker: float = Field(1.0, gt=0, description="CPUs each env host actor holds")


class TrainConfig(_Strict):
    model: str = Field("smollm2-135m", description="HF model dir or built-in alias")
    mode: Mode = Field("spade", description="spade (self-play) or fixed (agent on a suite)")
    fixed_suite: str = Field(
        "spade-seed@1.2.0", description="env pool of the fixed baseline (its train split only)"
    )
    iterations: int = Field(3, ge=1, description="self-play iterations (policy updates)")
    seed: int = 0
    no_corpus: bool = Field(False, description="ablation: designer prompt without a document")
    no_memory: bool = Field(False, description="ablation: no memory references or negatives")
    no_designer_training: bool = Field(False, description="ablation: frozen designer role")
    designer: DesignerConfig = Field(default_factory=DesignerConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    corpus: CorpusConfig = Field(default_factory=CorpusConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    reward: RewardConfig = Field(default_factory=RewardConfig)
    pool: PoolConfig = Field(default_factory=PoolConfig)
    bootstrap: BootstrapConfig = Field(
        default_factory=BootstrapConfig,
        description="agent SFT on teacher play first, when the run starts from a built-in model",
    )
    update: dict[str, Any] = Field(
        default_factory=lambda: dict(UPDATE_DEFAULTS),
        description="spade.rl.config.UpdateConfig fields; those not given keep the laptop "
        "defaults here, then UpdateConfig's",
    )
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    generation_batch_size: int = Field(8, ge=1, description="conversations per generate call")
    check_seeds: int = Field(3, ge=1, description="seeds `spade-suite check` plays per env")
    keep_checkpoints: int = Field(2, ge=1)
    freeze_at_end: bool = Field(True, description="freeze accepted envs as a suite at the end")
    sandbox: SandboxConfig = Field(
        default_factory=SandboxConfig,
        description="where generated envs run (spade.sandbox.SandboxConfig fields): backend "
        "auto (bubblewrap, else docker; the run stops when neither works), bwrap, docker, or "
        "unsafe-process (explicit opt-in without that isolation), and the limits",
    )
    ray: RayConfig = Field(default_factory=RayConfig, description="env workers on Ray")

    def update_config(self) -> UpdateConfig:
        """The update's settings; each role is scored under the temperature it samples at
        (a greedy role's logprobs are at temperature 1)."""
        sampled = {"designer": self.designer.temperature, "agent": self.agent.temperature}
        roles = {role: t if t > 0 else 1.0 for role, t in sampled.items()}
        return UpdateConfig.from_dict(
            {"seed": self.seed, **self.update, "role_temperatures": roles}
        )

    def weight_sync(self) -> WeightSync:
        """How a server backend receives the weights: `generation.weight_sync`, resolved."""
        sync = self.generation.weight_sync
        if sync != "auto":
            return sync
        if self.update_config().lora:
            return "lora_adapter"
        return "nccl" if self.generation.base_url else "reload"

    @field_validator("update")
    @classmethod
    def _keep_laptop_defaults(cls, update: dict[str, Any]) -> dict[str, Any]:
        # `update: {lora: true}` (or --set update.lora=true) changes one field, not all three.
        return {**UPDATE_DEFAULTS, **update}

    @field_validator("update")
    @classmethod
    def _role_temperatures_follow_sampling(cls, update: dict[str, Any]) -> dict[str, Any]:
        # The loss must score each token under the temperature it was sampled at, so the
        # roles' update temperatures are their sampling temperatures, never set apart.
        if "role_temperatures" in update:
            raise ValueError(
                "update.role_temperatures is set from designer.temperature and "
                "agent.temperature; set those instead"
            )
        return update

    @model_validator(mode="after")
    def _regret_needs_hinted_plays(self) -> TrainConfig:
        kind = self.reward.kind
        if self.mode == "spade" and not self.agent.hinted_plays and kind in NEEDS_REGRET:
            raise ValueError(
                f"agent.hinted_plays: false leaves no regret, which the {kind!r} designer "
                "reward needs"
            )
        return self

    @model_validator(mode="after")
    def _adapters_need_lora(self) -> TrainConfig:
        if self.generation.weight_sync == "lora_adapter" and not self.update_config().lora:
            raise ValueError("generation.weight_sync 'lora_adapter' needs update.lora: true")
        return self


def read_with_overrides(path: Path | None, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """A YAML config file's mapping (empty without a file), with `key.sub=value` overrides."""
    raw: dict[str, Any] = {}
    if path is not None:
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML ({exc})") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: expected a mapping of config fields")
    for dotted, value in (overrides or {}).items():
        target = raw
        *parents, leaf = dotted.split(".")
        for key in parents:
            target = target.setdefault(key, {})
            if not isinstance(target, dict):
                raise ConfigError(f"{path or 'config'}: {dotted}: {key} is not a section")
        target[leaf] = value
    return raw


def validation_message(path: Path | None, exc: ValidationError) -> str:
    """A pydantic error as one line naming the file and the field."""
    first = exc.errors()[0]
    where = "".join(f"{p}: " for p in [".".join(str(p) for p in first["loc"])] if p)
    message = _run_config_names(first["msg"].removeprefix("Value error, "))
    return f"{path or 'config'}: {where}{message}"


def load_config(path: Path | None, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """Read a YAML config (or the defaults), apply `key.sub=value` overrides, validate."""
    raw = read_with_overrides(path, overrides)
    try:
        config = TrainConfig.model_validate(raw)
        config.update_config()
    except ValidationError as exc:
        raise ConfigError(validation_message(path, exc)) from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{path or 'config'}: update: {_run_config_names(str(exc))}") from None
    return config


def _run_config_names(message: str) -> str:
    """UpdateConfig's messages in the run config's terms: its fields live under `update.`."""
    return message.replace("UpdateConfig.", "update.").replace("UpdateConfig field", "update field")


def dump_config(config: BaseModel) -> str:
    """A config (spade-train's, a warm start's) as YAML in field order: what a run records."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)


def prior_config() -> TrainConfig:
    """The defaults, with each `PRIOR_VALUES` field at the value that keeps the behaviour of
    runs from before it: the config a recorded unit's missing fields are read against."""
    return load_config(None, PRIOR_VALUES)
