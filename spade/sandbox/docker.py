"""Workers as Docker containers: one container per persistent worker.

Each worker is `python3 -I -S /spade/worker.py '<json>'` in the image `docker_image.py`
builds (the host's interpreter and standard library, nothing else), started with: no
network (`network_mode=none`), a read-only root, size-capped tmpfs for /scratch and /tmp as
the only writable places, no /dev/shm (`ipc_mode=none`), uid/gid 65534, all capabilities
dropped, no-new-privileges, the engine's default seccomp profile, a memory limit with no
swap, a pids limit, one CPU, ulimits (nofile, fsize, core, cpu), no host environment and no
log driver (the protocol never touches the engine's disk).

The worker script is baked into the image rather than bind-mounted: a bind mount names a
path on the engine's host, which is wrong for a remote engine or docker-in-docker, and the
image's recipe label already covers the script, so an edited worker means a rebuilt image.

The host talks to the worker over the container's attach socket (stdin + stdout, tty off),
on which the engine multiplexes stdout in frames with an 8-byte header; `_AttachReader`
strips them under `spade.sandbox.wire.Reader`, so deadlines, the size cap and decoding are
exactly those of pipe workers.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import socket
import ssl
import struct
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from spade.sandbox.config import SandboxConfig, default_config
from spade.sandbox.docker_image import (
    DEFAULT_PYTHON,
    IMAGE_PYTHON,
    IMAGE_WORKER,
    NOBODY,
    SCRATCH,
    ensure_image,
)
from spade.sandbox.errors import SandboxError, SandboxUnavailable
from spade.sandbox.transport import (
    PACKAGE_ROOT,
    PythonEntry,
    entry_arguments,
    mounted_name,
    worker_arguments,
)
from spade.sandbox.wire import Reader, WireClosed, WireTimeout, encode

LABEL = "org.spade.sandbox"
OWNER_LABEL = "org.spade.sandbox.owner"
_FRAME = struct.Struct(">BxxxL")  # stream id (0 stdin, 1 stdout, 2 stderr), payload size
_STDOUT = 1
_SEND_TIMEOUT_S = 10.0
_API_TIMEOUT_S = 60


def _owner() -> str:
    """Who started a container: host, pid and the pid's start time (pids get reused)."""
    return f"{socket.gethostname()}/{os.getpid()}/{_start_time(os.getpid())}"


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "?"


def _owner_alive(owner: str) -> bool:
    host, _, rest = owner.partition("/")
    pid, _, started = rest.partition("/")
    if host != socket.gethostname() or not pid.isdigit():
        return True  # not ours to judge
    return _start_time(int(pid)) == started


DEFAULT_ENGINE = "unix:///var/run/docker.sock"
_REACH_TIMEOUT_S = 3.0


class EngineUnreachable(SandboxUnavailable):
    """No Docker engine answers at `url`; `why` says how it failed."""

    def __init__(self, url: str, why: str) -> None:
        self.url, self.why = url, why
        super().__init__(
            f"docker backend: no Docker engine reachable at {url} ({why}); set DOCKER_HOST or "
            "start one with `python -m spade.sandbox.dockerd start --state-dir DIR`"
        )


def _why(exc: Exception) -> str:
    text = str(exc)
    if "FileNotFoundError" in text or "No such file" in text:
        return "no socket there"
    if "ermission" in text:
        return "permission denied"
    if "refused" in text:
        return "connection refused"
    return text.splitlines()[0][:120] if text else type(exc).__name__


def _reach(url: str) -> None:
    """Fail fast, before the SDK's long API timeout, when a tcp engine's port is silent."""
    parsed = urlparse(url)
    if parsed.scheme in ("tcp", "http", "https") and parsed.hostname:
        try:
            socket.create_connection(
                (parsed.hostname, parsed.port or 2375), _REACH_TIMEOUT_S
            ).close()
        except OSError as exc:
            raise EngineUnreachable(url, exc.strerror or type(exc).__name__) from None


_lock = threading.Lock()
_clients: dict[str, Any] = {}
_images: set[tuple[str, str]] = set()


def engine_url(url: str | None) -> str:
    """The engine address `url` stands for (None: DOCKER_HOST, else the local socket)."""
    return url or os.environ.get("DOCKER_HOST") or DEFAULT_ENGINE


def connect(url: str | None) -> Any:
    """A docker client for `url` (None: DOCKER_HOST or the local socket), one per process,
    already checked to answer; or a one-line `SandboxUnavailable` (`EngineUnreachable`)."""
    try:
        import docker
        import docker.errors
    except ImportError:
        raise SandboxUnavailable(
            "docker backend: the docker Python package is not installed (pip install docker)"
        ) from None

    key = engine_url(url)
    with _lock:
        client = _clients.get(key)
        if client is not None:
            return client
        _reach(key)
        try:
            if url is None:
                client = docker.from_env(timeout=_API_TIMEOUT_S)
            else:
                client = docker.DockerClient(base_url=url, timeout=_API_TIMEOUT_S)
            client.api.ping()
        except (docker.errors.DockerException, OSError) as exc:
            raise EngineUnreachable(key, _why(exc)) from None
        if client.api.base_url.startswith("http+docker://ssh"):
            raise SandboxUnavailable(
                "docker backend: ssh:// engines are not supported; use unix/tcp"
            )
        _clients[key] = client
        _remove_orphans(client)
        return client


def _remove_orphans(client: Any) -> None:
    """Remove sandbox containers whose owning process (on this host) is gone, e.g. after a
    crash: their worker saw stdin close and exited, or is still spinning on a hostile env."""
    with contextlib.suppress(Exception):
        for summary in client.api.containers(all=True, filters={"label": OWNER_LABEL}):
            owner = (summary.get("Labels") or {}).get(OWNER_LABEL, "")
            if owner and not _owner_alive(owner):
                with contextlib.suppress(Exception):
                    client.api.remove_container(summary["Id"], force=True)


class _AttachReader(Reader):
    """`wire.Reader` over the attach stream: the engine frames stdout as
    `[stream, 0, 0, 0, size]` + payload; only the stdout payload reaches the buffer that
    the inherited `read()` parses, so deadlines, the size cap and decoding are the same as
    for pipe workers.

    Reads at most what the caller still needs (plus one socket buffer), so a flooding
    worker costs the host no more memory than the reply cap."""

    def __init__(self, sock: socket.socket, max_bytes: int) -> None:
        super().__init__(sock.fileno(), max_bytes)
        self.sock = sock
        sock.setblocking(False)
        self._writable = select.poll()
        self._writable.register(sock.fileno(), select.POLLOUT | select.POLLHUP | select.POLLERR)
        self._header = bytearray()
        self._left = 0  # payload bytes still to come in the current frame
        self._keep = False
        self.ended = False

    def _fill(self, need: int, deadline: float) -> None:
        while len(self._buffer) < need:
            try:
                chunk = self.sock.recv(max(need - len(self._buffer), 65536))
            except (BlockingIOError, ssl.SSLWantReadError):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._poll.poll(remaining * 1000.0):
                    raise WireTimeout from None
                continue
            except OSError as exc:
                self.ended = True
                raise WireClosed(f"attach stream failed: {exc}") from None
            if not chunk:
                self.ended = True
                raise WireClosed("the container's output ended")
            self._feed(chunk)

    def _feed(self, chunk: bytes) -> None:
        view, pos, size = memoryview(chunk), 0, len(chunk)
        while pos < size:
            if self._left == 0:
                take = min(_FRAME.size - len(self._header), size - pos)
                self._header += view[pos : pos + take]
                pos += take
                if len(self._header) == _FRAME.size:
                    stream, self._left = _FRAME.unpack(self._header)
                    self._keep = stream == _STDOUT
                    self._header.clear()
                continue
            take = min(self._left, size - pos)
            if self._keep:
                self._buffer += view[pos : pos + take]
            pos += take
            self._left -= take

    def send(self, data: bytes, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        view = memoryview(data)
        while view:
            try:
                view = view[self.sock.send(view) :]
            except (BlockingIOError, ssl.SSLWantWriteError):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._writable.poll(remaining * 1000.0):
                    raise WireClosed("the worker stopped reading its input") from None
            except OSError as exc:
                raise WireClosed(str(exc)) from None


class DockerTransport:
    """One worker container, created from `container` (`_container_config`) and reached
    through its attach socket."""

    def __init__(self, client: Any, config: SandboxConfig, container: Any) -> None:
        import docker.errors

        self.api = client.api
        self.config = config
        self._removed = False
        self._reason = ""
        self.timings: dict[str, float] = {}
        started = time.perf_counter()
        self.id: str = self.api.create_container_from_config(container)["Id"]
        self.timings["create"] = time.perf_counter() - started
        try:
            # Attach before start: output written before an attach is not replayed.
            self._socket_io = self.api.attach_socket(
                self.id, params={"stdin": 1, "stdout": 1, "stderr": 0, "stream": 1}
            )
            raw = getattr(self._socket_io, "_sock", self._socket_io)
            self._reader = _AttachReader(raw, config.max_output_bytes + 4096)
            self.timings["attach"] = time.perf_counter() - started
            self.api.start(self.id)
            self.timings["start"] = time.perf_counter() - started
        except (docker.errors.DockerException, OSError) as exc:
            self.kill()
            raise SandboxError(f"docker backend: could not start a worker: {exc}") from None

    def send(self, message: dict[str, Any]) -> None:
        if self._removed:
            raise WireClosed("the worker container was removed")
        self._reader.send(encode(message), max(self.config.call_timeout_s, _SEND_TIMEOUT_S))

    def receive(self, timeout: float) -> dict[str, Any]:
        return self._reader.read(timeout)

    def _state(self) -> dict[str, Any]:
        with contextlib.suppress(Exception):
            state: dict[str, Any] = self.api.inspect_container(self.id)["State"]
            return state
        return {}

    def kill(self) -> None:
        """Remove the container (SIGKILL to everything in it); idempotent."""
        if self._removed:
            return
        self._removed = True
        if getattr(self, "_reader", None) is not None and self._reader.ended:
            # The worker ended on its own: give the engine a moment to record how, so
            # exit_reason can say 'OOM killed' rather than guess.
            state = self._state()
            deadline = time.monotonic() + 1.0
            while state.get("Running") and time.monotonic() < deadline:
                time.sleep(0.02)
                state = self._state()
            self._reason = _describe(state, self.config)
        with contextlib.suppress(Exception):  # already gone, or removal in progress
            self.api.remove_container(self.id, force=True)
        socket_io = getattr(self, "_socket_io", None)
        if socket_io is not None:
            with contextlib.suppress(Exception):
                self._reader.sock.close()
            with contextlib.suppress(Exception):
                socket_io.close()
            response = getattr(socket_io, "_response", None)
            if response is not None:
                with contextlib.suppress(Exception):
                    response.close()

    def exit_reason(self) -> str:
        if not self._removed:
            return _describe(self._state(), self.config)
        return self._reason


def _describe(state: dict[str, Any], config: SandboxConfig) -> str:
    if not state or state.get("Running"):
        return ""
    if state.get("OOMKilled"):
        return f"OOM killed (container memory limit {config.memory_mb} MB)"
    code = int(state.get("ExitCode", 0))
    error = f"; {state['Error']}" if state.get("Error") else ""
    if code > 128:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(code - 128).name}{error}"
    return f"exited with status {code}{error}"


def _container_config(
    api: Any,
    config: SandboxConfig,
    image: str,
    cpus: float | None,
    arguments: dict[str, Any] | None = None,
    mounts: dict[str, str] | None = None,
) -> Any:
    """The container of one worker; `arguments` (default: an env worker's) and read-only
    bind `mounts` (container path: host path) serve entry points (`spawn_entry`)."""
    from docker.types import LogConfig, Mount, Ulimit

    arguments = arguments or worker_arguments(config, SCRATCH)
    # The container's memory cgroup is the memory limit here: it counts real pages of every
    # process and of the tmpfs mounts, where RLIMIT_AS (per process, virtual) would refuse
    # harmless reservations and still let a few processes together exceed the budget.
    arguments["limits"].pop("address_space", None)
    scratch_mb = min(config.file_size_mb * 4, 256)  # as the bwrap backend: 4 files' worth
    tmp_mb = min(config.file_size_mb, 64)
    binds = [
        Mount(target, source, type="bind", read_only=True)
        for target, source in (mounts or {}).items()
    ]
    mount_options = f"uid={NOBODY},gid={NOBODY},mode=0700,noexec,nosuid,nodev"
    host_config = api.create_host_config(
        network_mode="none",
        read_only=True,
        tmpfs={
            SCRATCH: f"size={scratch_mb}m,{mount_options}",
            "/tmp": f"size={tmp_mb}m,{mount_options}",
        },
        ipc_mode="none",  # no /dev/shm: the tmpfs mounts above are the only writable places
        # Otherwise the engine copies the host's resolv.conf (its DNS servers, search
        # domains) into the container; there is no network to resolve on anyway.
        dns=["127.0.0.1"],
        dns_search=["."],
        mem_limit=config.memory_mb << 20,
        memswap_limit=config.memory_mb << 20,  # equal: no swap on top
        pids_limit=config.max_processes,
        nano_cpus=int(cpus * 1e9) if cpus else None,
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        ulimits=[
            Ulimit(name="nofile", soft=config.open_files, hard=config.open_files),
            Ulimit(name="fsize", soft=config.file_size_mb << 20, hard=config.file_size_mb << 20),
            Ulimit(name="core", soft=0, hard=0),
            Ulimit(name="cpu", soft=config.cpu_seconds, hard=config.cpu_seconds),
        ],
        log_config=LogConfig(type="none"),
        mounts=binds or None,
    )
    container = api.create_container_config(
        image,
        [IMAGE_PYTHON, "-I", "-S", IMAGE_WORKER, json.dumps(arguments)],
        hostname="sandbox",
        user=f"{NOBODY}:{NOBODY}",
        stdin_open=True,
        environment=[],
        working_dir=SCRATCH,
        labels={LABEL: "worker", OWNER_LABEL: _owner()},
        stop_signal="SIGKILL",  # pid 1 ignores SIGTERM; `docker stop` should not wait 10 s
        host_config=host_config,
    )
    # Built directly rather than through create_container(), which would inject proxy
    # variables from ~/.docker/config.json into the environment. StdinOnce: when the
    # caller dies, its attach closes, stdin hits EOF and the worker exits by itself.
    container.update(AttachStdin=True, AttachStdout=True, AttachStderr=False, StdinOnce=True)
    return container


class DockerBackend:
    """Starts workers as containers on one engine (config.docker_url, else DOCKER_HOST, else
    the local socket). Connecting and making sure the image exists happen here, once per
    process and engine, so a missing engine or an image that cannot be built fails at
    construction with one line (`SandboxUnavailable`).

    `config.extra` keys: `docker_cpus` (CPUs per worker, default "1"; "0" for no quota) and
    `docker_python` (the host interpreter the image is built from, default /usr/bin/python3).
    """

    name = "docker"

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or default_config()
        self.client = connect(self.config.docker_url)
        self.image = self.config.docker_image
        import docker.errors

        try:
            self.image_status = self._ensure_image(force=False)
        except (SandboxError, docker.errors.DockerException, OSError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise SandboxUnavailable(
                f"docker backend: cannot prepare the image {self.image}: {reason}"
            ) from None

    def _ensure_image(self, force: bool) -> str:
        key = (str(self.client.api.base_url), self.image)
        with _lock:
            if key in _images and not force:
                return "checked"
            python = self.config.extra.get("docker_python", DEFAULT_PYTHON)
            status = ensure_image(self.client, self.image, python)
            _images.add(key)
            return status

    @functools.cached_property
    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = self.client.api.info()
        return info

    def _cpus(self, config: SandboxConfig) -> float | None:
        cpus = float(config.extra.get("docker_cpus", "1"))
        return cpus if cpus > 0 and self._info.get("CpuCfsQuota") else None

    def spawn(self, config: SandboxConfig) -> DockerTransport:
        return self._spawn(config, None, None)

    def spawn_entry(
        self, config: SandboxConfig, entry: PythonEntry, sources: dict[str, Path]
    ) -> DockerTransport:
        """The worker as launcher of `entry`, each package of `sources` bind-mounted read-only
        under /spade/lib. A bind mount names a path on the engine's host, so this works with
        an engine on this machine (the image's Python must be able to import the packages);
        elsewhere the mount fails, or the launcher cannot import them, and `start_entry`
        says so in one line."""
        mounts = {
            f"{PACKAGE_ROOT}/{mounted_name(name, path)}": str(path)
            for name, path in sources.items()
        }
        return self._spawn(config, entry_arguments(config, SCRATCH, entry, [PACKAGE_ROOT]), mounts)

    def _spawn(
        self,
        config: SandboxConfig,
        arguments: dict[str, Any] | None,
        mounts: dict[str, str] | None,
    ) -> DockerTransport:
        import docker.errors

        def create() -> DockerTransport:
            cpus = self._cpus(config)
            container = _container_config(
                self.client.api, config, self.image, cpus, arguments, mounts
            )
            return DockerTransport(self.client, config, container)

        try:
            return create()
        except docker.errors.ImageNotFound:
            self._ensure_image(force=True)  # removed behind our back (e.g. `docker rmi`)
        except (docker.errors.DockerException, OSError) as exc:
            raise SandboxError(f"docker backend: could not create a worker: {exc}") from None
        return create()

    def isolation(self) -> dict[str, Any]:
        info = self._info
        security = " ".join(info.get("SecurityOptions") or [])
        return {
            "backend": self.name,
            "unsafe": False,
            "engine": f"docker {info.get('ServerVersion', '?')} ({info.get('Driver', '?')})",
            "image": self.image,
            "network_namespace": True,
            "pid_namespace": True,
            "mount_namespace": True,
            "user_namespace": "name=userns" in security or "name=rootless" in security,
            "unprivileged_uid": True,
            "filesystem_view": "image with the interpreter and standard library only, read-only",
            "writable": "size-capped tmpfs /scratch and /tmp (no /dev/shm)",
            "environment": "empty (the engine adds PATH, HOSTNAME, HOME)",
            "rlimits": True,
            "process_limit": (
                f"container pids limit {self.config.max_processes}"
                if info.get("PidsLimit")
                else "none (engine lacks pids cgroup)"
            ),
            "memory_cgroup": bool(info.get("MemoryLimit")),
            "swap_limited": bool(info.get("SwapLimit")),
            "cpu_limit": self._cpus(self.config),
            "capabilities": "all dropped, no-new-privileges",
            "seccomp": "name=seccomp" in security,
            "apparmor": "name=apparmor" in security,
        }
