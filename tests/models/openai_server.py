"""A small OpenAI-compatible chat completions server on 127.0.0.1 that answers with a real Policy.

Test infrastructure, kept where the real server cannot stand in: a generic OpenAI-compatible
server (a hosted API, llama.cpp) that reports no token ids, answers the first N requests with
503 on demand (retries), and parses tool calls. The real `vllm serve` (CPU build) is tested in
test_vllm_server.py. Only the HTTP layer is ours; the completions come from the real
transformers backend, so a round trip through it is a real generation. It speaks the subset
of the API the backend uses (non-streaming /v1/chat/completions, GET /v1/models; no
/version, so clients take it for a generic server) and records every request body. An unknown
model name is a 404. (vLLM's own routes, runtime LoRA included, are tested on the real server:
tests/models/test_vllm_server.py, tests/selfplay/test_generation.py.)
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from spade.models import Completion, Policy, SamplingParams


class ChatCompletionsServer:
    def __init__(
        self,
        policy: Policy,
        fail_first: int = 0,
        model_name: str | None = None,
    ) -> None:
        """`model_name`: the served name (None: any name is answered by `policy`)."""
        self.policy = policy
        self.fail_first = fail_first
        self.model_name = model_name
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ChatCompletionsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=5)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            if self.fail_first > 0:
                self.fail_first -= 1
                return 503, {"error": {"message": "warming up", "type": "server_error"}}
        stop = body.get("stop") or []
        sampling = SamplingParams(
            max_new_tokens=body.get("max_tokens") or body.get("max_completion_tokens") or 16,
            temperature=body.get("temperature", 1.0),
            top_p=body.get("top_p", 1.0),
            stop=tuple([stop] if isinstance(stop, str) else stop),
            seed=body.get("seed"),
            logprobs=bool(body.get("logprobs")),
        )
        if self.model_name not in (None, body["model"]):
            return 404, {"error": {"message": f"The model `{body['model']}` does not exist."}}
        tools = body.get("tools")
        completion = self.policy.generate([body["messages"]], sampling, [tools])[0]
        return 200, _response(body["model"], completion)

    def models(self) -> dict[str, Any]:
        names = [self.model_name or "served-model"]
        return {"object": "list", "data": [{"id": n, "object": "model"} for n in names]}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/v1/models":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                self._send(200, server.models())

            def do_POST(self) -> None:
                path = self.path.rstrip("/")
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                if path == "/v1/chat/completions":
                    self._send(*server.answer(body))
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

        return Handler


def _response(model: str, completion: Completion) -> dict[str, Any]:
    logprobs = None
    if completion.logprobs is not None:
        logprobs = {
            "content": [
                {"token": str(token), "logprob": lp, "bytes": None, "top_logprobs": []}
                for token, lp in zip(completion.token_ids or [], completion.logprobs, strict=True)
            ]
        }
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": completion.text},
                "finish_reason": completion.finish_reason,
                "logprobs": logprobs,
            }
        ],
        "usage": {
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "total_tokens": completion.prompt_tokens + completion.completion_tokens,
        },
    }
