"""A spade-train iteration with its env workers on Ray actors equals the local iteration: the
same plays, metrics (all but the timings), update and weights, from the same seeds.

The fixed baseline on a suite whose episodes end with reply-dependent rewards, so the plays
differ in return and the update takes a real step (tests/selfplay/test_loop.py); the policy is
the tiny model, generating in this process as the local run does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from spade.selfplay.config import ConfigError, load_config
from spade.selfplay.loop import SelfPlayRun
from spade.suites import freeze_suite
from tests.distributed.conftest import CPUS, RayHead, free_port
from tests.selfplay.test_loop import LENGTH_ENV, tiny_config, weights


def iteration(model: Path, suites: Path, run_dir: Path, **ray: object) -> tuple[Any, ...]:
    overrides = {"mode": "fixed", "fixed_suite": "lengths@1.0.0", "designer.group_size": 1,
                 "memory.cold_start_suite": "lengths@1.0.0", "sandbox.backend": "bwrap",
                 **{f"ray.{key}": value for key, value in ray.items()}}  # fmt: skip
    run = SelfPlayRun(load_config(None, tiny_config(model, **overrides)), run_dir, suites)
    try:
        run.start()
        hosts = run.env_hosts
        metrics = run.iteration()
        episodes = (run_dir / "episodes.jsonl").read_text()
        return metrics, weights(run), episodes, hosts
    finally:
        run.close()


def timing(metric: str) -> bool:
    return metric.startswith("time/") or metric.endswith("seconds")


def test_an_iteration_on_ray_equals_the_local_one(
    ray_head: RayHead, tiny_model_dir: Path, tmp_path: Path
) -> None:
    source = tmp_path / "length_env.py"
    source.write_text(LENGTH_ENV)
    suites = tmp_path / "suites"
    freeze_suite([source], "lengths", "1.0.0", root=suites)
    local = iteration(tiny_model_dir, suites, tmp_path / "local")
    on_ray = iteration(tiny_model_dir, suites, tmp_path / "ray", env_workers=CPUS,
                       address=ray_head.address)  # fmt: skip
    assert local[3] is None and on_ray[3] is not None and on_ray[3].hosts == []  # closed
    untimed = [{k: v for k, v in run[0].items() if not timing(k)} for run in (local, on_ray)]
    # As JSON, so that the metrics an iteration without designs leaves NaN compare equal.
    assert json.dumps(untimed[1], sort_keys=True) == json.dumps(untimed[0], sort_keys=True)
    assert untimed[0]["update/optimizer_steps"] >= 1 and untimed[0]["agent/episodes"] > 0
    assert torch.equal(on_ray[1], local[1])  # the same update, to the bit
    assert on_ray[2] == local[2]  # the sample episodes, transcripts and rewards


@pytest.mark.parametrize(
    ("ray", "message"),
    [
        ({"env_workers": CPUS + 1}, f"ray.env_workers={CPUS + 1}: {CPUS + 1} workers x 1 CPU need"),
        ({"env_workers": 1, "address": "nowhere"},
         "Ray address 'nowhere': expected HOST:PORT, ray://HOST:PORT, auto or local"),
    ],
)  # fmt: skip
def test_a_bad_ray_section_is_a_config_error(
    ray_head: RayHead, tiny_model_dir: Path, tmp_path: Path, ray: dict[str, object],
    message: str,
) -> None:  # fmt: skip
    ray = {"address": ray_head.address, **ray}
    overrides = {f"ray.{key}": value for key, value in ray.items()}
    with pytest.raises(ConfigError, match=r"^ray: ") as raised:
        SelfPlayRun(load_config(None, tiny_config(tiny_model_dir, **overrides)), tmp_path / "r")
    assert message in str(raised.value)


def test_an_unreachable_cluster_is_a_config_error(tiny_model_dir: Path, tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    overrides = {"ray.env_workers": 1, "ray.address": address}
    with pytest.raises(ConfigError, match=f"^ray: cannot reach a Ray cluster at {address} "):
        SelfPlayRun(load_config(None, tiny_config(tiny_model_dir, **overrides)), tmp_path / "r")
