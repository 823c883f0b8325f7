"""The sandbox worker: runs one untrusted environment program and answers requests.

This file is executed as a script (``python3 -s -S _worker.py``) inside the isolation layer,
so it must use the standard library only and must not import ``spade``. It speaks the wire
protocol of :mod:`spade.sandbox.wire` on its stdin/stdout, which it moves to private file
descriptors first: whatever the environment prints goes to /dev/null, never into the protocol.

Requests are ``{"op": NAME, ...}``; replies are ``{"ok": true, "result": ...}`` or
``{"ok": false, "error": KIND, "message": str}`` where KIND is ``env`` (the env raised),
``contract`` (the env returned something the contract forbids) or ``protocol``.

``run_program`` is separate from the env ops: it runs one complete program (a code-benchmark
solution with its tests) in a forked child and reports how it ended; see `op_run_program`.

Given an ``entry`` in its arguments, the worker is instead the launcher of a trusted Python
entry point (`spade.sandbox.entry`): the same limits and scratch dir, then that module runs as
``__main__`` with stdin/stdout as its own protocol; see `_run_entry`.
"""

import contextlib
import json
import json.scanner
import os
import re
import resource
import select
import signal
import struct
import sys
import time
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
        self._scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]

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
        # Closing the instance this one replaces is housekeeping, no call of the env's user:
        # its close() failing (one that assumes reset() ran, say) is not the new one's fault.
        with contextlib.suppress(Exception):
            self._close_current()
        env = self.env_class()
        self.env = env
        tools = getattr(env, "tools", None)
        metadata = getattr(env, "metadata", None)
        return {
            "class_name": type(env).__name__,
            "tools": tools if tools is None else json.loads(json.dumps(tools)),
            "metadata": _plain(metadata) if isinstance(metadata, dict) else {},
            "max_turns": _max_turns(env),
            "levels": _levels(env),
        }

    def op_reset(self, seed: int | None = None, difficulty: int | None = None) -> dict:
        env = self._instance()
        if difficulty is None:  # an env without levels need not take `options`
            out = env.reset(seed=seed)  # type: ignore[attr-defined]
        else:
            levels = _levels(env)
            if (
                isinstance(difficulty, bool)
                or not isinstance(difficulty, int)
                or not (0 <= difficulty < levels)
            ):
                raise ContractError(
                    f"difficulty {difficulty!r} is not one of the env's levels "
                    f"0..{levels - 1} (difficulty_levels={levels})"
                )
            out = env.reset(seed=seed, options={"difficulty": difficulty})  # type: ignore[attr-defined]
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ContractError(f"reset() must return (observation, info), got {_describe(out)}")
        obs, info = out
        _expect(obs, str, "reset() observation")
        _expect(info, dict, "reset() info")
        # A level may set its own turn budget: the episode's cap is read after reset.
        return {"observation": obs, "info": _plain(info), "max_turns": _max_turns(env)}

    def op_step(self, action: str) -> dict:
        out = self._instance().step(action)  # type: ignore[attr-defined]
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
        actions = self._instance().solution()  # type: ignore[attr-defined]
        if not isinstance(actions, (list, tuple)) or not all(isinstance(a, str) for a in actions):
            raise ContractError(f"solution() must return a list of str, got {_describe(actions)}")
        return {"actions": list(actions)}

    def op_state(self) -> dict:
        """The env's instance attributes, for hint-leak detection (plain values only)."""
        env = self._instance()
        attributes = dict(getattr(env, "__dict__", {}))
        for klass in type(env).__mro__:  # an env class may keep its state in __slots__
            slots = klass.__dict__.get("__slots__", ())
            for name in [slots] if isinstance(slots, str) else slots:
                if hasattr(env, name):
                    attributes.setdefault(name, getattr(env, name))
        return {"state": _plain({k: v for k, v in attributes.items() if not k.startswith("__")})}

    def op_close(self) -> dict:
        self._close_current()
        return {}

    def op_ping(self) -> dict:
        return {"pid": os.getpid(), "uid": os.getuid()}

    def op_run_program(self, source: str, timeout_s: float, filename: str = "program.py") -> dict:
        """Run `source` as a whole program in a forked child; report passed/failed/timeout.

        Forking keeps each program independent and cheap: the child starts from this worker's
        pristine state (a program worker never loads env code), so no program sees another's
        monkeypatched builtins, threads or files. A pass needs exit status 0 *and* a token the
        child writes only after `exec` of the whole program returned, so sys.exit(0), exit()
        or os._exit(0) before the tests cannot fake one.
        """
        _become_subreaper()
        token = os.urandom(16).hex()
        workdir = os.path.abspath(f"program-{token[:12]}")
        os.mkdir(workdir)
        read_fd, write_fd = os.pipe()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            _program_child(
                source, filename, write_fd, token, workdir, timeout_s, (self.fd_in, self.fd_out)
            )
        os.close(write_fd)
        try:
            exited = _wait_child(pid, timeout_s)
            seconds = time.monotonic() - started
            status = _end_child(pid)
            strays = _kill_descendants()
            report = _drain(read_fd)
        finally:
            os.close(read_fd)
            import shutil  # only program workers pay for this import

            shutil.rmtree(workdir, ignore_errors=True)
        outcome, detail = _classify(status if exited else None, report, token, timeout_s)
        return {"status": outcome, "detail": detail, "seconds": seconds, "strays": strays}

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


def _max_turns(env: object) -> int | None:
    max_turns = getattr(env, "max_turns", None)
    if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int)):
        raise ContractError(f"max_turns must be an int, got {type(max_turns).__name__}")
    return max_turns


def _levels(env: object) -> int:
    """The env's `difficulty_levels` (levels 0..N-1); 1 when it declares none (no knob)."""
    levels = getattr(env, "difficulty_levels", 1)
    if isinstance(levels, bool) or not isinstance(levels, int) or levels < 1:
        raise ContractError(f"difficulty_levels must be an int >= 1, got {_describe(levels)}")
    return levels


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


_SUBREAPER: list[bool] = []


def _become_subreaper() -> None:
    # Orphans of a program (one that escaped its process group with setsid) then reparent to
    # this worker, where `_kill_descendants` finds them; without it they would outlive the run.
    if not _SUBREAPER:
        try:
            import ctypes

            pr_set_child_subreaper = 36
            libc = ctypes.CDLL(None, use_errno=True)
            _SUBREAPER.append(libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0)
        except (ImportError, OSError, AttributeError):
            _SUBREAPER.append(False)


def _program_child(
    source: str,
    filename: str,
    write_fd: int,
    token: str,
    workdir: str,
    timeout_s: float,
    protocol_fds: tuple[int, int],
) -> None:
    """The forked child: run the program, then write the pass token; never returns."""
    write, exit_now = os.write, os._exit  # bound before the program can monkeypatch `os`
    try:
        os.setsid()  # its own process group: a timeout kills the program and its children
        for fd in protocol_fds:
            os.close(fd)  # the program must never reach the wire
        os.chdir(workdir)
        # A CPU-time backstop in case the worker itself is starved of wall-clock checks.
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        cpu = int(timeout_s) + 2
        if hard != resource.RLIM_INFINITY:
            cpu = min(cpu, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        # The worker runs without `site` (-S), which is what defines exit() and quit();
        # programs expect them, and they must raise SystemExit as in a normal interpreter.
        import builtins
        import linecache

        builtins.exit = builtins.quit = _site_exit  # type: ignore[assignment]
        # Lets failure reports quote the failing line of the program.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        code = compile(source, filename, "exec")
        exec(code, {"__name__": "__spade_program__"})
    except BaseException as exc:  # SystemExit included: exiting early is not passing
        try:
            text = "F" + _describe_failure(exc)
        except BaseException:
            text = "Fthe program raised an exception that cannot be described"
        with contextlib.suppress(BaseException):
            write(write_fd, text.encode("utf-8", "replace")[:4000])
        exit_now(1)
    try:
        write(write_fd, ("P" + token).encode())
    except BaseException:
        exit_now(1)
    exit_now(0)


def _site_exit(code: object = None) -> None:
    raise SystemExit(code)


def _describe_failure(exc: BaseException) -> str:
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    if frames:
        where = frames[-1]
        message += f" (line {where.lineno}: {(where.line or '').strip()[:200]})"
    return message[:2000]


def _wait_child(pid: int, timeout_s: float) -> bool:
    """Whether the child exited before the deadline. It is left a zombie (WNOWAIT) so that
    its pid, and so its process group id, cannot be reused before `_end_child` kills it."""
    deadline = time.monotonic() + timeout_s
    try:
        pidfd: int | None = os.pidfd_open(pid)  # readable when the child exits (Linux 5.3+)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while True:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if pidfd is not None:
                select.select([pidfd], [], [], remaining)
            else:
                time.sleep(min(remaining, 0.002))
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _end_child(pid: int) -> int:
    """Kill the program's process group (whatever it left running there), reap the child
    and return its wait status."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def _live_children() -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as handle:
                found += [int(p) for p in handle.read().split()]
    except OSError:  # no CONFIG_PROC_CHILDREN: scan every process's parent
        me = os.getpid()
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat") as handle:
                        stat = handle.read()
                except OSError:
                    continue
                if int(stat.rpartition(")")[2].split()[1]) == me:
                    found.append(int(name))
    return found


def _kill_descendants() -> int:
    """Kill and reap whatever a program left outside its process group (the worker is their
    subreaper); returns how many were found (0 for a well-behaved program)."""
    strays = 0
    for _ in range(100):  # a fork bomb may race the killing for a few rounds
        _reap()
        alive = _live_children()
        if not alive:
            break
        strays = max(strays, len(alive))
        for pid in alive:
            for kill in (os.killpg, os.kill):
                with contextlib.suppress(OSError):
                    kill(pid, signal.SIGKILL)
    _reap()
    return strays


def _reap() -> None:
    while True:
        try:
            done, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not done:
            return


def _drain(fd: int, cap: int = 8192) -> str:
    os.set_blocking(fd, False)
    data = b""
    while len(data) < cap:
        try:
            chunk = os.read(fd, cap - len(data))
        except BlockingIOError:
            break
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace")


def _classify(status: int | None, report: str, token: str, timeout_s: float) -> tuple[str, str]:
    if status is None:
        return "timeout", f"the program exceeded its {timeout_s:g} s limit"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return "crashed", f"the program was killed by {name}"
    code = os.WEXITSTATUS(status)
    if code == 0 and report == "P" + token:
        return "passed", ""
    if code != 0 and report.startswith("F"):
        return "failed", report[1:]
    return "failed", f"the program exited (status {code}) before its tests finished"


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


ENTRY_FAILED = 71


def _frame(fd: int, message: dict) -> None:
    data = json.dumps(message).encode("utf-8")
    data = HEADER.pack(len(data)) + data
    while data:
        data = data[os.write(fd, data) :]


def _run_entry(entry: dict, fd_in: int, fd_out: int) -> None:
    """Run the trusted module `entry["module"]` as ``__main__`` with `entry["args"]`.

    The read-only package roots go on sys.path after the standard library (so no package can
    shadow it) and this script's folder comes off it; each of `entry["packages"]` is imported
    first, so a package the sandbox cannot see (or cannot load: another Python version) is
    one framed `{"ok": false, "error": "launcher"}` reply and exit status 71 instead of a
    silent death. Otherwise the reply is `{"ok": true, "result": {"ready": true}}`, and from
    then on stdin and stdout belong to the module; whatever it writes to stderr goes nowhere.
    """
    import importlib
    import runpy

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p != here] + list(entry.get("roots", []))
    sys.dont_write_bytecode = True  # the package folders are read-only anyway
    for name in entry.get("packages", []):
        try:
            importlib.import_module(name)
        except BaseException as exc:
            message = f"cannot import {name}: {type(exc).__name__}: {exc}"
            _frame(fd_out, {"ok": False, "error": "launcher", "message": message[:2000]})
            os._exit(ENTRY_FAILED)
    _frame(fd_out, {"ok": True, "result": {"ready": True, "pid": os.getpid()}})
    os.dup2(fd_in, 0)
    os.dup2(fd_out, 1)
    os.close(fd_in)
    os.close(fd_out)
    sys.argv = [entry["module"], *entry.get("args", [])]
    runpy.run_module(entry["module"], run_name="__main__", alter_sys=True)


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
    if config.get("entry"):
        _run_entry(config["entry"], fd_in, fd_out)
        return
    sys.setrecursionlimit(5000)
    worker = Worker(fd_in, fd_out, int(config.get("max_message", 1 << 20)))
    worker.send({"ok": True, "result": {"ready": True, "pid": os.getpid()}})
    worker.serve()


if __name__ == "__main__":
    main()
