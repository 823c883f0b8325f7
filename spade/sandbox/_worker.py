"""The sandbox worker: runs one untrusted environment program and answers requests.

This file is executed as a script (``python3 -s -S _worker.py``) inside the isolation layer,
so it must use the standard library only and must not import ``spade``. It speaks the wire
protocol of :mod:`spade.sandbox.wire` on its stdin/stdout, which it moves to private file
descriptors first: whatever the environment prints goes to /dev/null, never into the protocol.

Requests are ``{"op": NAME, ...}``; replies are ``{"ok": true, "result": ...}`` or
``{"ok": false, "error": KIND, "message": str}`` where KIND is ``env`` (the env raised),
``contract`` (the env returned something the contract forbids) or ``protocol``.
"""

import json
import json.scanner
import os
import re
import resource
import signal
import struct
import sys
import traceback
import types

HEADER = struct.Struct(">I")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_ENV_CLASS_SUFFIX = "Env"


class ContractError(Exception):
    """The environment returned a value the contract does not allow."""


class Worker:
    def __init__(self, fd_in: int, fd_out: int, max_message: int) -> None:
        self.fd_in = fd_in
        self.fd_out = fd_out
        self.max_message = max_message
        self.module: types.ModuleType | None = None
        self.env_class: type | None = None
        self.env: object | None = None
        # One encoder for the worker's life: building one per reply costs more than a step.
        self._buffer = bytearray()
        self._ops = {name[3:]: getattr(self, name) for name in dir(self) if name.startswith("op_")}
        self._encode = json.JSONEncoder(default=repr, ensure_ascii=False).encode
        # The C scanner itself: json.loads's Python wrappers cost as much as a small step.
        self._scan = json.scanner.make_scanner(json.JSONDecoder())

    # -- framing -------------------------------------------------------------------------
    def _read_exact(self, n: int) -> bytes:
        # Buffered: one read() usually brings a whole request, header and body together.
        while len(self._buffer) < n:
            chunk = os.read(self.fd_in, max(65536, n - len(self._buffer)))
            if not chunk:
                raise EOFError
            self._buffer += chunk
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        return data

    def receive(self) -> dict:
        (size,) = HEADER.unpack(self._read_exact(HEADER.size))
        request, _ = self._scan(self._read_exact(size).decode("utf-8"), 0)
        return request

    def send(self, reply: dict) -> None:
        data = self._encode(reply).encode("utf-8", "replace")
        if len(data) > self.max_message:
            # Giant observations are the env's fault; the host must never buffer them.
            data = json.dumps(
                {
                    "ok": False,
                    "error": "contract",
                    "message": f"reply of {len(data)} bytes exceeds the output cap "
                    f"of {self.max_message} bytes",
                }
            ).encode()
        data = HEADER.pack(len(data)) + data
        written = os.write(self.fd_out, data)
        while written < len(data):
            data = data[written:]
            written = os.write(self.fd_out, data)

    # -- operations ----------------------------------------------------------------------
    def op_load(self, source: str, filename: str = "env.py") -> dict:
        module = types.ModuleType("spade_env")
        module.__file__ = filename
        sys.modules["spade_env"] = module
        exec(compile(source, filename, "exec"), module.__dict__)
        classes = [
            obj
            for name, obj in vars(module).items()
            if isinstance(obj, type)
            and name.endswith(_ENV_CLASS_SUFFIX)
            and obj.__module__ == "spade_env"
        ]
        names = sorted(c.__name__ for c in classes)
        self.module = module
        self.env_class = classes[0] if len(classes) == 1 else None
        return {"classes": names}

    def _instance(self) -> object:
        if self.env is None:
            raise ContractError("reset() must be called before step()")
        return self.env

    def op_new(self) -> dict:
        if self.env_class is None:
            raise ContractError("load() must find exactly one class whose name ends in 'Env'")
        self._close_current()
        env = self.env_class()
        self.env = env
        tools = getattr(env, "tools", None)
        metadata = getattr(env, "metadata", None)
        max_turns = getattr(env, "max_turns", None)
        if max_turns is not None and (
            isinstance(max_turns, bool) or not isinstance(max_turns, int)
        ):
            raise ContractError(f"max_turns must be an int, got {type(max_turns).__name__}")
        return {
            "class_name": type(env).__name__,
            "tools": tools if tools is None else json.loads(json.dumps(tools)),
            "metadata": _plain(metadata) if isinstance(metadata, dict) else {},
            "max_turns": max_turns,
        }

    def op_reset(self, seed: int | None = None) -> dict:
        out = self._instance().reset(seed=seed)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ContractError(f"reset() must return (observation, info), got {_describe(out)}")
        obs, info = out
        _expect(obs, str, "reset() observation")
        _expect(info, dict, "reset() info")
        return {"observation": obs, "info": _plain(info)}

    def op_step(self, action: str) -> dict:
        out = self._instance().step(action)
        if not (isinstance(out, tuple) and len(out) == 5):
            raise ContractError(f"step() must return a 5-tuple, got {_describe(out)}")
        obs, reward, terminated, truncated, info = out
        _expect(obs, str, "step() observation")
        if isinstance(reward, bool) or not isinstance(reward, (int, float)):
            raise ContractError(f"step() reward must be a number, got {_describe(reward)}")
        reward = float(reward)
        if not 0.0 <= reward <= 1.0:  # also rejects NaN
            raise ContractError(f"step() reward must lie in [0, 1], got {reward!r}")
        _expect(terminated, bool, "step() terminated")
        _expect(truncated, bool, "step() truncated")
        _expect(info, dict, "step() info")
        return {
            "observation": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
            "info": _plain(info) if info else {},
        }

    def op_solution(self) -> dict:
        actions = self._instance().solution()
        if not isinstance(actions, (list, tuple)) or not all(isinstance(a, str) for a in actions):
            raise ContractError(f"solution() must return a list of str, got {_describe(actions)}")
        return {"actions": list(actions)}

    def op_state(self) -> dict:
        """The env's instance attributes, for hint-leak detection (plain values only)."""
        env = self._instance()
        return {"state": _plain({k: v for k, v in vars(env).items() if not k.startswith("__")})}

    def op_close(self) -> dict:
        self._close_current()
        return {}

    def op_ping(self) -> dict:
        return {"pid": os.getpid(), "uid": os.getuid()}

    def _close_current(self) -> None:
        env, self.env = self.env, None
        if env is not None and hasattr(env, "close"):
            env.close()

    # -- loop ----------------------------------------------------------------------------
    def handle(self, request: dict) -> dict:
        op = request.pop("op", None)
        method = self._ops.get(op) if isinstance(op, str) else None
        if method is None:
            return {"ok": False, "error": "protocol", "message": f"unknown op {op!r}"}
        try:
            return {"ok": True, "result": method(**request)}
        except ContractError as exc:
            return {"ok": False, "error": "contract", "message": str(exc)}
        except BaseException as exc:  # the env may raise anything, SystemExit included
            tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
            return {
                "ok": False,
                "error": "env",
                "message": f"{type(exc).__name__}: {exc}"[:2000],
                "traceback": "".join(tb)[-4000:],
            }

    def serve(self) -> None:
        while True:
            try:
                request = self.receive()
            except EOFError:
                return
            self.send(self.handle(request))


def _expect(value: object, kind: type, what: str) -> None:
    if not isinstance(value, kind):
        raise ContractError(f"{what} must be {kind.__name__}, got {_describe(value)}")


def _describe(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}"


def _plain(value: object, depth: int = 0) -> object:
    """A JSON-safe copy of ``value``; anything exotic becomes its repr."""
    if depth > 20:
        return "..."
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [_plain(v, depth + 1) for v in items]
    # Memory addresses differ between instances and would make equal states look different.
    return _ADDRESS.sub("", repr(value))[:1000]


def _apply_limits(limits: dict) -> None:
    table = {
        "address_space": resource.RLIMIT_AS,
        "cpu_seconds": resource.RLIMIT_CPU,
        "open_files": resource.RLIMIT_NOFILE,
        "file_size": resource.RLIMIT_FSIZE,
        "processes": resource.RLIMIT_NPROC,
        "core": resource.RLIMIT_CORE,
    }
    for name, value in limits.items():
        if name in table and value is not None:
            resource.setrlimit(table[name], (value, value))


def main() -> None:
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    # Keep the protocol on private descriptors; the env's own prints go nowhere.
    fd_in, fd_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    scratch = config.get("scratch")
    if scratch:
        os.chdir(scratch)
    # Over-size writes should fail with EFBIG inside the env, not kill the worker.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _apply_limits(config.get("limits", {}))
    sys.setrecursionlimit(5000)
    worker = Worker(fd_in, fd_out, int(config.get("max_message", 1 << 20)))
    worker.send({"ok": True, "result": {"ready": True, "pid": os.getpid()}})
    worker.serve()


if __name__ == "__main__":
    main()
