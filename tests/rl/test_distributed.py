"""Data-parallel updates for real: two processes under torchrun (gloo on CPU) take the same
steps as one process, end with identical weights, load the driver's checkpoint, and stop
when the driver closes. Plus the single-process `World`, which must cost nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from spade.rl import Learner
from spade.rl.distributed import SINGLE_PROCESS, join_world
from tests.rl._distributed_update import CONFIGS, UPDATES, trainable

SCRIPT = Path(__file__).with_name("_distributed_update.py")
REPO = Path(__file__).resolve().parents[2]
LAUNCHER_VARS = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


@pytest.fixture(scope="module")
def two_ranks(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output dir of one 2-process run of the script (its own free port: --standalone)."""
    out = tmp_path_factory.mktemp("distributed")
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    env["OMP_NUM_THREADS"] = "1"  # two processes on a 2-core machine
    # torchrun puts the script's folder first on sys.path, not the repo root `tests` sits in.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += ["--nproc_per_node", "2", str(SCRIPT), str(tiny_model_dir), str(out)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


@contextmanager
def one_thread() -> Iterator[None]:
    """As the launched processes run: on a 2-core machine a tiny model's passes are several
    times faster on one thread than on two that share the cores with other work."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_two_ranks_take_the_single_process_steps(
    name: str, two_ranks: Path, tiny_model_dir: Path
) -> None:
    single = Learner(tiny_model_dir, CONFIGS[name])
    before = trainable(single)
    with one_thread():
        expected = [single.update(batch).as_dict() for batch in UPDATES]
    after = trainable(single)
    got = json.loads((two_ranks / f"{name}.json").read_text())
    for want, have in zip(expected, got, strict=True):
        assert want["optimizer_steps"] > 0 and want["agent/tokens"] > 0
        assert {**have, "seconds": 0} == pytest.approx({**want, "seconds": 0}, abs=1e-5)
    rank0 = load_file(str(two_ranks / f"{name}-rank0.safetensors"))
    assert rank0.keys() == after.keys()
    assert all(torch.allclose(rank0[n], after[n], atol=1e-6) for n in after)
    assert all(not torch.allclose(before[n], after[n], atol=1e-4) for n in after)  # it moved


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_rank_ends_with_identical_weights(name: str, two_ranks: Path) -> None:
    rank0 = load_file(str(two_ranks / f"{name}-rank0.safetensors"))
    rank1 = load_file(str(two_ranks / f"{name}-rank1.safetensors"))
    assert all(torch.equal(rank0[n], rank1[n]) for n in rank0)


def test_followers_load_the_drivers_checkpoint_and_stop_when_it_closes(
    two_ranks: Path,
) -> None:
    # The run returned 0: each follow() returned after close(), three times over.
    trained = load_file(str(two_ranks / "steps-rank0.safetensors"))
    for rank in (0, 1):
        resumed = load_file(str(two_ranks / f"resumed-rank{rank}.safetensors"))
        assert all(torch.equal(resumed[n], trained[n]) for n in trained)
    assert "rank 0 only" in (two_ranks / "follower-save.txt").read_text()
    assert not (two_ranks / "follower-checkpoints").exists()


@pytest.mark.parametrize("rank", [0, 1])
def test_world_collectives_sum_and_broadcast(rank: int, two_ranks: Path) -> None:
    got = load_file(str(two_ranks / f"world-rank{rank}.safetensors"))
    assert torch.equal(got["a"], torch.full((3,), 3.0))
    assert torch.equal(got["b"], torch.full((2, 2), 3.0))
    assert torch.equal(got["c"], torch.arange(5.0) * 3)
    assert torch.equal(got["d"], torch.full((2, 3), 3.0, dtype=torch.bfloat16))
    assert torch.equal(got["broadcast"], torch.ones(6, dtype=torch.bfloat16))  # rank 0's
    assert got["floats"].tolist() == [3.0, 1.0]


def test_without_a_launcher_the_world_is_one_process(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in LAUNCHER_VARS:
        monkeypatch.delenv(name, raising=False)
    assert join_world("auto") is SINGLE_PROCESS
    assert SINGLE_PROCESS.broadcast_object(["x"]) == ["x"]
    assert SINGLE_PROCESS.all_reduce_floats([1.5, 2.0]) == [1.5, 2.0]
    learner = Learner(tiny_model_dir)
    assert learner.world is SINGLE_PROCESS and learner.world.is_main
    learner.close()  # no followers: nothing to release
    learner.close()
    with pytest.raises(RuntimeError, match="rank 0 drives"):
        learner.follow()


def test_a_distributed_run_refuses_one_fixed_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="'cuda:1'.*use 'auto'"):
        join_world("cuda:1")
