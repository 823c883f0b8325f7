"""Start a private Docker engine for tests and CI, and stop it again.

`LocalDockerd` runs `dockerd` with everything under one state directory (data root, exec
root, pidfile, socket, log, an empty daemon.json so the host's /etc/docker config cannot
interfere) and no networking setup at all: sandbox containers use `network_mode=none`, so
no bridge and no iptables rules are needed, which is also what lets it start inside an
unprivileged-network VM or a CI container. overlay2 is tried first; where this filesystem
cannot host it (overlay on overlay, some tmpfs/FUSE setups) it falls back to vfs.

Command line (for CI):
    python -m spade.sandbox.dockerd run [--state-dir DIR] -- CMD ARGS...
        start an engine, run CMD with DOCKER_HOST pointing at it, stop the engine, exit
        with CMD's status;
    python -m spade.sandbox.dockerd start --state-dir DIR   (prints DOCKER_HOST=...)
    python -m spade.sandbox.dockerd stop --state-dir DIR
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

DEFAULT_SOCKET = "unix:///var/run/docker.sock"
STORAGE_DRIVERS = ("overlay2", "vfs")


class DockerdError(RuntimeError):
    """The private engine could not be started."""


def default_engine_url() -> str:
    return os.environ.get("DOCKER_HOST") or DEFAULT_SOCKET


def engine_answers(url: str | None = None, timeout: float = 2.0) -> bool:
    """Whether a Docker engine answers `GET /_ping` at `url` (unix:// or tcp://, no TLS).

    Plain sockets rather than the SDK: this runs in a tight loop while dockerd starts, and
    building a client negotiates the API version on every try."""
    parsed = urlparse(url or default_engine_url())
    try:
        if parsed.scheme == "unix":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(parsed.path)
        elif parsed.scheme in ("tcp", "http"):
            sock = socket.create_connection((parsed.hostname, parsed.port or 2375), timeout)
        else:
            return False
        with sock:
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            reply = sock.recv(4096)
    except OSError:
        return False
    return reply.startswith(b"HTTP/1.") and b" 200 " in reply.split(b"\r\n", 1)[0] + b" "


class LocalDockerd:
    """One private dockerd. Use as a context manager, or `start()` / `stop()`."""

    def __init__(
        self,
        state_dir: str | Path | None = None,
        binary: str = "dockerd",
        storage_drivers: tuple[str, ...] = STORAGE_DRIVERS,
        start_timeout_s: float = 30.0,
    ) -> None:
        self._owns_dir = state_dir is None
        # Short path: the engine's socket and containerd's live below it (108-byte limit).
        self.state_dir = Path(state_dir or tempfile.mkdtemp(prefix="spade-dockerd-", dir="/tmp"))
        self.binary = binary
        self.storage_drivers = storage_drivers
        self.start_timeout_s = start_timeout_s
        self.storage_driver: str | None = None
        self.start_seconds = 0.0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def socket_path(self) -> Path:
        return self.state_dir / "docker.sock"

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    @property
    def log_path(self) -> Path:
        return self.state_dir / "dockerd.log"

    def _argv(self, driver: str) -> list[str]:
        config = self.state_dir / "daemon.json"
        config.write_text("{}\n")
        binary = shutil.which(self.binary) or shutil.which(self.binary, path="/usr/sbin:/sbin")
        if binary is None:
            raise DockerdError(f"{self.binary} not found")
        return [
            binary,
            f"--storage-driver={driver}",
            "--iptables=false",
            "--ip6tables=false",
            "--ip-masq=false",
            "--bridge=none",
            f"--config-file={config}",
            f"--data-root={self.state_dir / 'data'}",
            f"--exec-root={self.state_dir / 'exec'}",
            f"--pidfile={self.state_dir / 'dockerd.pid'}",
            f"-H={self.url}",
            # Never share a system containerd's namespace with another engine.
            "--containerd-namespace=spade",
            "--containerd-plugins-namespace=spade-plugins",
            "--shutdown-timeout=2",
        ]

    def start(self) -> LocalDockerd:
        if os.geteuid() != 0:
            raise DockerdError("starting dockerd needs root (rootless dockerd is not set up)")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        failures: list[str] = []
        for driver in self.storage_drivers:
            started = time.perf_counter()
            if self._try_start(driver):
                self.storage_driver = driver
                self.start_seconds = time.perf_counter() - started
                return self
            failures.append(f"{driver}: {self._log_tail()}")
            # Partial state from a failed driver must not confuse the next one.
            _unmount_below(self.state_dir)
            shutil.rmtree(self.state_dir / "data", ignore_errors=True)
        raise DockerdError("dockerd did not start; " + " | ".join(failures))

    def _try_start(self, driver: str) -> bool:
        argv = self._argv(driver)
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C in the test run must not hit the engine
                close_fds=True,
            )
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.process = None
                return False
            if self.socket_path.exists() and engine_answers(self.url, timeout=1.0):
                return True
            time.sleep(0.02)
        self._terminate()
        return False

    def _log_tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "no log"
        errors = [line for line in lines if "level=fatal" in line or "level=error" in line]
        return (errors or lines or ["no log"])[-1][-300:]

    def _remove_containers(self) -> None:
        # Containers still running at shutdown make dockerd wait for their stop timeout.
        with contextlib.suppress(Exception):
            import docker

            client = docker.DockerClient(base_url=self.url, timeout=10)
            try:
                for container in client.api.containers(all=True, quiet=True):
                    with contextlib.suppress(Exception):
                        client.api.remove_container(container["Id"], force=True)
            finally:
                client.close()

    def _terminate(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def stop(self) -> None:
        """Remove its containers, stop the engine (and its containerd), clean up."""
        if self.process is not None and self.process.poll() is None:
            self._remove_containers()
        self._terminate()
        _unmount_below(self.state_dir)
        if self._owns_dir:
            shutil.rmtree(self.state_dir, ignore_errors=True)

    def __enter__(self) -> LocalDockerd:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _unmount_below(directory: Path) -> None:
    """Lazily unmount anything left mounted under `directory` (overlay layers, netns files,
    overlay2's private bind mount), deepest first, so removing the directory is safe."""
    prefix = str(directory.resolve()) + "/"
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return
    points = [line.split()[4] for line in lines]
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


def _stop_by_state_dir(state_dir: Path) -> int:
    pidfile = state_dir / "dockerd.pid"
    if not pidfile.exists():
        print(f"no dockerd.pid in {state_dir}", file=sys.stderr)
        return 1
    engine = LocalDockerd(state_dir)
    pid = int(pidfile.read_text().strip())
    if engine_answers(engine.url):
        engine._remove_containers()
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        for _ in range(400):
            os.kill(pid, 0)
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)
    _unmount_below(state_dir)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spade.sandbox.dockerd",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a command against a private engine")
    run.add_argument("--state-dir", type=Path)
    run.add_argument("cmd", nargs=argparse.REMAINDER)
    start = commands.add_parser("start", help="start an engine and leave it running")
    start.add_argument("--state-dir", type=Path, required=True)
    stop = commands.add_parser("stop", help="stop an engine started with `start`")
    stop.add_argument("--state-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "stop":
            return _stop_by_state_dir(args.state_dir)
        if args.command == "start":
            engine = LocalDockerd(args.state_dir).start()
            print(f"DOCKER_HOST={engine.url}")
            print(
                f"storage driver {engine.storage_driver}, up in {engine.start_seconds:.2f} s",
                file=sys.stderr,
            )
            return 0
        cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
        if not cmd:
            parser.error("run needs a command after --")
        with LocalDockerd(args.state_dir) as engine:
            env = {**os.environ, "DOCKER_HOST": engine.url}
            return subprocess.run(cmd, env=env).returncode
    except DockerdError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
