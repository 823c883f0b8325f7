"""vLLM's control routes over HTTP: one client for a server spade owns and one it was given.

The routes that take new weights into a running `vllm serve` and list what it serves:
runtime LoRA (`/v1/load_lora_adapter`, `/v1/unload_lora_adapter`; the server needs
VLLM_ALLOW_RUNTIME_LORA_UPDATING=True), full weights re-read from a safetensors dir
(`/collective_rpc` with `reload_weights`, one of the development routes VLLM_SERVER_DEV_MODE=1
opens, then `/reset_prefix_cache`: cached KV blocks came from the old weights), and
`/v1/models`. Generation goes through `OpenAIPolicy`, not here.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spade.models.policy import PolicyError


class RouteError(PolicyError):
    """A control request was refused or could not reach the server; the message is one line."""


class VLLMRoutes:
    """The control routes of the vLLM server at `root` (its address without `/v1`)."""

    def __init__(
        self,
        root: str,
        timeout_s: float,
        alive: Callable[[], None] | None = None,
        error: type[RouteError] = RouteError,
    ) -> None:
        """`alive`: called before each request and after a failed one; raises when the
        server is known to be gone (a managed server's process check), so the error names
        the cause rather than a refused connection. `error`: the RouteError type raised."""
        self.root = root.rstrip("/").removesuffix("/v1")
        self.timeout_s = timeout_s
        self._alive = alive or (lambda: None)
        self._error = error

    def models(self) -> list[str]:
        """Served model names: the base model, then loaded adapters."""
        reply = self.request("GET", "/v1/models")
        try:
            return [str(entry["id"]) for entry in reply.get("data", [])]
        except (KeyError, TypeError) as exc:
            raise self._error(f"GET {self.root}/v1/models: unexpected reply ({exc})") from None

    def load_lora_adapter(self, name: str, path: str | Path) -> None:
        """Serve the PEFT adapter at `path` (as the server sees it) under `name`; requests
        then name it as their model."""
        self.post("/v1/load_lora_adapter", {"lora_name": name, "lora_path": str(path)})

    def unload_lora_adapter(self, name: str) -> None:
        self.post("/v1/unload_lora_adapter", {"lora_name": name})

    def reload_weights(self, weights_dir: str | Path) -> None:
        """Have the engine re-read the safetensors in `weights_dir` (as the server sees it;
        HF names, every weight, tied ones included), then drop the prefix cache."""
        self.post("/collective_rpc", {"method": "reload_weights",
                                      "kwargs": {"weights_path": str(weights_dir)}})  # fmt: skip
        self.post("/reset_prefix_cache", {})

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", path, body)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One control request; its JSON reply (`{}` when empty, `{"text": ...}` when not
        JSON). A refusal or an unreachable server is a RouteError."""
        self._alive()
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.root}{path}", data, method=method,
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as reply:
                raw = reply.read()
        except urllib.error.HTTPError as exc:
            detail = " ".join(exc.read().decode(errors="replace").split())[:300]
            raise self._error(f"{method} {self.root}{path}: HTTP {exc.code}: {detail}") from None
        except OSError as exc:
            self._alive()
            raise self._error(f"{method} {self.root}{path}: {exc}") from None
        try:
            parsed = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {"text": raw.decode(errors="replace")}
        return parsed if isinstance(parsed, dict) else {"value": parsed}
