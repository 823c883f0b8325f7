"""Joining a Ray cluster (or starting a local one) and checking it can hold the workers asked for.

Addresses: `local` (or None) starts a private single-node cluster in this process, sized to
this machine; `auto` is the cluster `ray start` made on this machine (or `$RAY_ADDRESS`);
anything else is `HOST:PORT` (or `ray://HOST:PORT` for Ray Client). A remote address is probed
over TCP first: Ray itself retries an unreachable one for minutes, printing as it goes.
Ray 2.60's `ray start --head` turns token authentication on when its machine has a token
(`~/.ray/auth_token`, which any local `ray.init()` writes): a driver joining by address then
needs `RAY_AUTH_MODE=token` and that token; one it refuses is told so in one line.

Workers get the driver's `SPADE_*` and Hugging Face settings (cache and data paths, offline
mode) in their runtime environment (`actor_options`), so on one machine they read and write the
same completion cache and model cache as a local run. Their stdout and stderr go to Ray's log
files on their node (`<temp dir>/session_latest/logs/`, default `/tmp/ray`), not to this
terminal.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from spade.distributed.errors import ClusterError

LOCAL = "local"
AUTO = "auto"
PROBE_TIMEOUT_S = 5.0
LOCAL_OBJECT_STORE_BYTES = 256 << 20
"""A local cluster's object store: spade ships prompts, saved outputs and sample records,
never tensors, so Ray's default (30% of RAM) would only be taken from the model."""
FORWARDED_PREFIXES = ("SPADE_",)
FORWARDED = (
    "HF_HOME",
    "HF_HUB_CACHE",
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_DATASETS_CACHE",
)
AUTH_MODE_VARIABLE = "RAY_AUTH_MODE"
"""Ray's switch for token authentication, which `ray start` turns on when a token exists."""
CURRENT_CLUSTER_FILE = Path("/tmp/ray/ray_current_cluster")
"""Where `ray start --head` records its address (what Ray's own `auto` reads)."""


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise ClusterError(
            "Ray is not installed: pip install 'spade[ray]' (install.sh installs it)"
        ) from None
    return ray


def forwarded_env() -> dict[str, str]:
    """The driver's settings that workers must share to behave as this process would."""
    return {
        name: value
        for name, value in os.environ.items()
        if name.startswith(FORWARDED_PREFIXES) or name in FORWARDED
    }


def actor_options(cpus: float, gpus: float = 0.0, **more: Any) -> dict[str, Any]:
    """Ray actor options for a spade worker: its resources and the driver's settings, read
    now (not when the connection was made), so each run's workers see its environment."""
    return {
        "num_cpus": cpus,
        "num_gpus": gpus,
        "runtime_env": {"env_vars": forwarded_env()},
        **more,
    }


@dataclass(frozen=True)
class Resources:
    cpus: float
    gpus: float
    nodes: int

    def describe(self) -> str:
        nodes = "1 node" if self.nodes == 1 else f"{self.nodes} nodes"
        return f"{self.cpus:g} CPUs, {self.gpus:g} GPUs on {nodes}"


class Cluster:
    """This process's connection to a Ray cluster; `close` disconnects (and stops a local one).

    A process already connected (e.g. a test that called `ray.init`) is reused as it is and
    left connected on `close`."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        self.ray = import_ray()
        self.address = address or LOCAL
        self._owned = not self.ray.is_initialized()
        if self._owned:
            self._init(num_cpus)

    def _init(self, num_cpus: int | None) -> None:
        options: dict[str, Any] = {
            "log_to_driver": False,  # workers log to their node's Ray log files
            "logging_level": logging.ERROR,  # Ray's own notices are not this command's output
        }
        if self.address == LOCAL:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            options |= {
                "address": LOCAL,
                "num_cpus": num_cpus,
                "include_dashboard": False,
                "object_store_memory": LOCAL_OBJECT_STORE_BYTES,
            }
        else:
            reachable = self._reachable(resolve_address(self.address))
            # `auto` goes to Ray as it is: Ray then uses the token `ray start` saved on this
            # machine by itself (it never sends a token to an address it was given).
            options["address"] = AUTO if self.address == AUTO else reachable
            if self.address != AUTO and not reachable.startswith("ray://"):
                self._check_token(reachable)
        try:
            self.ray.init(**options)
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError, ...
            if _refused_token(exc):
                raise ClusterError(self._token_message()) from None
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ClusterError(f"cannot join the Ray cluster at {self.address}: {first}") from None

    def _check_token(self, address: str) -> None:
        """One connection attempt with Ray's GCS client: a cluster that refuses this process's
        token (or its lack of one) is told in one line now, not after ray.init's ~20 s of
        retries, each logged to the terminal by Ray's C++ client."""
        from ray._raylet import GcsClient  # type: ignore[attr-defined]  # Ray ships no type hints for it

        try:
            with native_stderr_silenced():
                GcsClient(address=address)
        except self.ray.exceptions.AuthenticationError:
            raise ClusterError(self._token_message()) from None
        except Exception:
            return  # not ready yet, or anything else: ray.init retries and reports it

    def _token_message(self) -> str:
        mode = os.environ.get(AUTH_MODE_VARIABLE, "unset")
        return (
            f"the Ray cluster at {self.address} refused this process's authentication token "
            f"({AUTH_MODE_VARIABLE} is {mode}): export {AUTH_MODE_VARIABLE}=token and the "
            "cluster's token (`ray get-auth-token` on its head) as RAY_AUTH_TOKEN, or in "
            "~/.ray/auth_token"
        )

    def _reachable(self, address: str) -> str:
        host, _, port = address.removeprefix("ray://").rpartition(":")
        if not host or not port.isdigit():
            raise ClusterError(
                f"Ray address {self.address!r}: expected HOST:PORT, ray://HOST:PORT, auto or local"
            )
        try:
            socket.create_connection((host.strip("[]"), int(port)), PROBE_TIMEOUT_S).close()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise ClusterError(
                f"cannot reach a Ray cluster at {address} ({reason}); start one with "
                "`ray start --head` or give its HOST:PORT"
            ) from None
        return address

    def resources(self) -> Resources:
        total = self.ray.cluster_resources()
        nodes = sum(1 for node in self.ray.nodes() if node.get("Alive"))
        return Resources(float(total.get("CPU", 0.0)), float(total.get("GPU", 0.0)), nodes)

    def require(self, workers: int, cpus: float, gpus: float, asked: str) -> Resources:
        """Refuse `workers` workers of `cpus` CPUs and `gpus` GPUs each when the whole cluster
        could never hold them (`asked` names the setting, for the message)."""
        have = self.resources()
        for name, each, total in (("CPU", cpus, have.cpus), ("GPU", gpus, have.gpus)):
            need = workers * each
            if need > total + 1e-9:
                raise ClusterError(
                    f"{asked}: {workers} workers x {each:g} {name} need {need:g} {name}s; the "
                    f"cluster at {self.address} has {total:g} ({have.describe()})"
                )
        return have

    def close(self) -> None:
        if self._owned and self.ray.is_initialized():
            self.ray.shutdown()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refused_token(exc: BaseException) -> bool:
    """Whether ray.init failed on token authentication (its cause names InvalidAuthToken)."""
    chain: BaseException | None = exc
    while chain is not None:
        if "InvalidAuthToken" in str(chain) or type(chain).__name__ == "AuthenticationError":
            return True
        chain = chain.__cause__ or chain.__context__
    return False


@contextlib.contextmanager
def native_stderr_silenced() -> Iterator[None]:
    """File descriptor 2 to /dev/null for the block: Ray's C++ client logs each failed
    attempt there directly, past Python's logging."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def resolve_address(address: str) -> str:
    """`auto` as Ray resolves it: `$RAY_ADDRESS`, else the address `ray start` recorded."""
    if address != AUTO:
        return address
    if os.environ.get("RAY_ADDRESS"):
        return os.environ["RAY_ADDRESS"]
    try:
        recorded = CURRENT_CLUSTER_FILE.read_text(encoding="utf-8").strip()
    except OSError:
        recorded = ""
    if not recorded:
        raise ClusterError(
            "Ray address auto: no cluster was started on this machine (`ray start --head`) "
            "and RAY_ADDRESS is not set"
        )
    return recorded
