"""Sandboxed env workers on Ray actors: env code runs on the node that hosts the actor.

`EnvHosts` starts `count` `EnvHost` actors; each holds any number of `RemoteEnv`s, so each
env's persistent worker runs in that node's sandbox (configured as the driver's). `open` is
an env factory with `RemoteEnv`'s signature: it returns a `RayEnv`, a local proxy with
`RemoteEnv`'s interface that forwards reset/step/solution/state/close to its host, so an
`EpisodeSpec(make_env=...)` is played as it is locally and the policy calls stay batched in
the driver. Hosts are taken in turn, one per env opened.

An env's own failures (timeouts, crashes, contract breaches) come back as the same exception
types and messages as locally, so an episode ends the same way; a host that is gone raises
`EnvHostLost` and the run stops.
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

from spade.distributed.cluster import Cluster, actor_options
from spade.distributed.errors import ClusterError, EnvHostLost
from spade.distributed.remote_errors import PackedError, pack_error
from spade.distributed.shards import PLACEMENT_TIMEOUT_S
from spade.envs.remote import EnvSpec, RemoteEnv, StepResult
from spade.sandbox import SandboxConfig, configure, default_config


class EnvHost:
    """The Ray actor holding env workers, each under a handle number."""

    def __init__(self, sandbox: SandboxConfig) -> None:
        configure(sandbox)
        self._envs: dict[int, RemoteEnv] = {}
        self._handles = itertools.count()

    def node(self) -> str:
        import ray

        return str(ray.util.get_node_ip_address())

    def open(self, source: str, filename: str, config: SandboxConfig | None) -> int:
        handle = next(self._handles)
        self._envs[handle] = RemoteEnv(source, filename, config)
        return handle

    def call(self, handle: int, op: str, *args: Any) -> tuple[str, Any]:
        env = self._envs.get(handle)
        try:
            if env is None:
                raise RuntimeError(f"env handle {handle} was closed")
            if op == "reset":
                observation, info = env.reset(*args)
                return "ok", (observation, info, env.spec)
            if op == "spec":
                return "ok", env.spec
            value = getattr(env, op)(*args)
        except Exception as exc:
            return "error", pack_error(exc)
        if op == "step":
            value = tuple(value)  # a plain tuple crosses; the proxy makes it a StepResult again
        if op == "close":
            del self._envs[handle]
        return "ok", value

    def open_envs(self) -> int:
        return len(self._envs)


class RayEnv(RemoteEnv):
    """A `RemoteEnv` whose sandboxed worker lives in an `EnvHost` actor, maybe on another node.

    Nothing runs locally: every call is one round trip to the host."""

    def __init__(
        self,
        host: Any,
        index: int,
        source: str,
        filename: str = "env.py",
        config: SandboxConfig | None = None,
    ) -> None:
        import ray

        self.source = source
        self.filename = filename
        self._ray = ray
        self._host = host
        self._index = index
        self._spec: EnvSpec | None = None
        self._closed = False
        self._handle: int = self._remote(host.open.remote(source, filename, config))

    @property
    def spec(self) -> EnvSpec:
        if self._spec is None:
            self._spec = self._forward("spec")
        assert self._spec is not None
        return self._spec

    def load(self) -> list[str]:
        classes: list[str] = self._forward("load")
        return classes

    def reset(
        self, seed: int | None = None, difficulty: int | None = None
    ) -> tuple[str, dict[str, Any]]:
        observation, info, self._spec = self._forward("reset", seed, difficulty)
        return observation, info

    def step(self, action: str) -> StepResult:
        return StepResult(*self._forward("step", action))

    def solution(self) -> list[str]:
        actions: list[str] = self._forward("solution")
        return actions

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = self._forward("state")
        return state

    def close(self) -> None:
        """Never raises: an episode closes its env however it ended (a lost host included)."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            self._forward("close")

    def _forward(self, op: str, *args: Any) -> Any:
        status, value = self._remote(self._host.call.remote(self._handle, op, *args))
        if status == "error":
            assert isinstance(value, PackedError)
            raise value.rebuild()
        return value

    def _remote(self, ref: Any) -> Any:
        try:
            return self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:
            first = next((line for line in str(exc).splitlines() if line.strip()), "")
            raise EnvHostLost(
                f"Ray env host {self._index} is gone ({type(exc).__name__}: {first.strip()[:200]})"
                "; its episodes cannot go on"
            ) from None


class EnvHosts:
    """`count` env host actors on `cluster`, `cpus` CPUs each; `open` is the env factory.

    `close` stops the hosts, and disconnects from the cluster when `owns_cluster`."""

    def __init__(
        self, cluster: Cluster, count: int, cpus: float = 1.0, owns_cluster: bool = False
    ) -> None:
        ray = cluster.ray
        self.cluster = cluster
        self.owns_cluster = owns_cluster
        # No restarts: a restarted host would have lost the envs its episodes are playing.
        actor = ray.remote(EnvHost).options(**actor_options(cpus, max_restarts=0))
        self.hosts = [actor.remote(default_config()) for _ in range(count)]
        started = [host.node.remote() for host in self.hosts]
        ready, _ = ray.wait(started, num_returns=count, timeout=PLACEMENT_TIMEOUT_S)
        if len(ready) < count:
            self.close()
            raise ClusterError(
                f"only {len(ready)} of {count} Ray env hosts ({cpus:g} CPU each) started "
                f"within {PLACEMENT_TIMEOUT_S:g} s (other jobs may hold the cluster's CPUs)"
            )
        self.nodes = [str(node) for node in ray.get(started)]
        self._turn = itertools.cycle(range(count))

    def open(
        self, source: str, filename: str = "env.py", config: SandboxConfig | None = None
    ) -> RayEnv:
        index = next(self._turn)
        return RayEnv(self.hosts[index], index, source, filename, config)

    @classmethod
    def start(cls, address: str | None, count: int, cpus: float, asked: str) -> EnvHosts:
        """Join the cluster at `address` (None: a local one), check it can hold `count` hosts
        (`asked` names the setting in the message) and start them."""
        cluster = Cluster(address)
        try:
            cluster.require(count, cpus, 0.0, asked)
            return cls(cluster, count, cpus, owns_cluster=True)
        except BaseException:
            cluster.close()
            raise

    def close(self) -> None:
        for host in self.hosts:
            self.cluster.ray.kill(host)
        self.hosts = []
        if self.owns_cluster:
            self.cluster.close()
