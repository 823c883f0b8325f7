"""Env workers on Ray actors: a `RayEnv` plays exactly the episode a local `RemoteEnv` plays,
an env's own errors come back as the same exceptions, and a lost host stops the episode with
`EnvHostLost` (not a broken-env verdict)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spade.distributed import Cluster, ClusterError, EnvHostLost, EnvHosts, RayEnv
from spade.envs.remote import RemoteEnv
from spade.models.policy import Completion, SamplingParams
from spade.rollout import EnvDriver, EpisodeSpec
from spade.sandbox import EnvCallError, SandboxTimeout
from tests.distributed.conftest import CPUS, RayHead

ROOT = Path(__file__).resolve().parents[2]
HIDDEN_NUMBER = (ROOT / "envs_snapshots/spade-seed/1.1.0/envs/hidden_number.py").read_text()
FLAKY = """
class FlakyEnv:
    def reset(self, seed=None):
        self.seed = seed
        return "go", {}

    def step(self, action):
        if action == "hang":
            while True:
                pass
        raise KeyError(f"no move {action!r} on seed {self.seed}")

    def solution(self):
        return []

    def close(self):
        pass
"""


@pytest.fixture
def hosts(ray_head: RayHead) -> Iterator[EnvHosts]:
    with Cluster(ray_head.address) as cluster:
        started = EnvHosts(cluster, 2)
        try:
            yield started
        finally:
            started.close()


def kill_and_wait(ray: Any, host: Any) -> None:
    """`ray.kill` only asks the GCS to kill the actor: on a busy machine (the head is niced) a
    call made right after it can still reach the live actor. A host is lost once it no longer
    answers, so wait for that before playing on."""
    ray.kill(host)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            ray.get(host.node.remote(), timeout=10)
        except ray.exceptions.RayActorError:
            return
        except ray.exceptions.GetTimeoutError:
            continue
        time.sleep(0.1)
    pytest.fail("a Ray env host still answers 60 s after ray.kill")


def episode(env: RemoteEnv, seed: int) -> list[object]:
    observation, info = env.reset(seed)
    played: list[object] = [observation, info, env.spec]
    for action in env.solution():
        played.append(tuple(env.step(action)))
    played.append(env.state())
    return played


def test_a_ray_env_plays_the_local_episode(hosts: EnvHosts) -> None:
    ray_env = hosts.open(HIDDEN_NUMBER, "hidden_number.py")
    assert isinstance(ray_env, RayEnv) and len(set(hosts.nodes)) == 1
    with RemoteEnv(HIDDEN_NUMBER, "hidden_number.py") as local:
        for seed in (3, 11):
            assert episode(ray_env, seed) == episode(local, seed)
    ray_env.close()
    ray_env.close()  # closing twice is harmless, as locally


def test_env_errors_cross_as_the_same_exceptions(hosts: EnvHosts) -> None:
    ray_env, local = hosts.open(FLAKY), RemoteEnv(FLAKY)
    caught = []
    for env in (ray_env, local):
        env.reset(5)
        with pytest.raises(EnvCallError) as raised:
            env.step("jump")
        caught.append((type(raised.value), str(raised.value), raised.value.kind))
        with pytest.raises(SandboxTimeout):
            env.step("hang")
        env.close()
    assert caught[0] == caught[1]
    assert "no move 'jump' on seed 5" in caught[0][1]


def test_a_lost_host_stops_the_episode_instead_of_failing_the_env(hosts: EnvHosts) -> None:
    spec = EpisodeSpec("e/0", lambda: hosts.open(HIDDEN_NUMBER), 3)
    driver = EnvDriver(spec, "agent", SamplingParams(max_new_tokens=8))
    driver.start()
    assert driver.episode.error is None and driver.next_request() is not None
    for host in hosts.hosts:
        kill_and_wait(hosts.cluster.ray, host)
    with pytest.raises(EnvHostLost, match=r"^Ray env host 0 is gone \("):
        driver.feed(Completion("guess 5", "stop", 0, 0))
    assert driver.episode.error is None  # not scored as a broken env
    driver.close()  # never raises, even with the host gone


def test_more_env_hosts_than_the_cluster_has_cpus_is_one_line(ray_head: RayHead) -> None:
    with pytest.raises(ClusterError) as raised:
        EnvHosts.start(ray_head.address, CPUS + 1, 1.0, "ray.env_workers=3")
    assert str(raised.value) == (
        f"ray.env_workers=3: 3 workers x 1 CPU need 3 CPUs; the cluster at {ray_head.address} "
        f"has {CPUS} ({CPUS} CPUs, 0 GPUs on 1 node)"
    )
