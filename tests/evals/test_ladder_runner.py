"""The `ladder` benchmarks: held-out envs and tasks per difficulty level, the pool's own
generators at unseen seeds, and a primary metric that is the mean over levels."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from spade.evals.benchmark import build_benchmark
from spade.evals.ladder_runner import PROCEDURAL_EVAL_SEED, LadderBenchmark
from spade.evals.run import resolve_benchmarks
from spade.procedural import POOL_TASKS, ProceduralEnv
from spade.suites import load_suite
from spade.suites.seeds import TRAINING_SEED_SPAN

ROOT = Path(__file__).resolve().parents[2]


def _ladder(name: str) -> LadderBenchmark:
    (declaration,), _ = resolve_benchmarks([name], None)
    benchmark = build_benchmark(declaration)
    assert isinstance(benchmark, LadderBenchmark)
    return benchmark


def _rg_benchmark_tasks() -> set[str]:
    tasks: set[str] = set()
    for path in (ROOT / "benchmarks").glob("rg_*.yaml"):
        tasks |= set(yaml.safe_load(path.read_text())["options"]["tasks"])
    return tasks


def test_pool_and_held_out_tasks_are_disjoint_from_each_other_and_every_rg_benchmark() -> None:
    heldout, pool = _ladder("ladder"), _ladder("ladder_pool")
    rg = _rg_benchmark_tasks()
    assert len(rg) == 69
    assert not set(heldout.tasks) & rg and not set(POOL_TASKS) & rg
    assert not set(heldout.tasks) & set(POOL_TASKS)
    assert pool.tasks == POOL_TASKS  # the pool's own generators, as training plays them
    assert {e.entry.split for e in heldout.suite_envs.values()} == {"heldout"}
    assert {e.entry.split for e in pool.suite_envs.values()} == {"train"}


def test_the_ladder_plays_every_held_out_env_at_every_level_on_unseen_seeds() -> None:
    ladder = _ladder("ladder")
    ids = ladder.sample_ids(None)
    assert len(ids) == 12 * 5 * 4 + (2 + 2 + 2 + 3) * 4
    procedural = [i for i in ids if i.startswith("rg:")]
    assert {int(i.rpartition("/")[2]) for i in procedural} == set(range(
        PROCEDURAL_EVAL_SEED, PROCEDURAL_EVAL_SEED + 4))  # fmt: skip
    assert PROCEDURAL_EVAL_SEED >= TRAINING_SEED_SPAN  # training draws below it
    assert {i.rpartition("/")[0].rpartition("@")[2] for i in ids} == {"0", "1", "2", "3", "4"}


def _prediction(sample_id: str, solve: bool) -> dict[str, object]:
    head, _, seed = sample_id.rpartition("/")
    key, _, level = head.rpartition("@")
    if not solve:
        return {"benchmark": "ladder", "id": sample_id, "output": ["\\boxed{?}"] * 60}
    if key.startswith("rg:"):
        task = key.removeprefix("rg:")
        env = ProceduralEnv(task, 3, _ladder("ladder").tasks[task])
        env.reset(int(seed), int(level))
        return {"benchmark": "ladder", "id": sample_id, "output": env.solution()}
    suite = load_suite("spade-seed@1.2.0", root=ROOT / "envs_snapshots")
    with next(e for e in suite.envs if e.id == key).remote() as remote:
        remote.reset(int(seed), int(level))
        return {"benchmark": "ladder", "id": sample_id, "output": remote.solution()}


def test_level_mean_success_is_the_mean_over_levels(tmp_path: Path) -> None:
    """Solutions at level 0 only, a blind player elsewhere: each level's success rate is 1 or 0,
    so the primary is 1/5 whatever the share of level-0 samples among the ids."""
    ids = [i for i in _ladder("ladder").sample_ids(None)
           if i.split("@")[0] in ("spade-seed/BattleshipEnv-v1", "rg:maze")]  # fmt: skip
    lines = [_prediction(i, solve=i.rpartition("/")[0].endswith("@0")) for i in ids]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "spade.cli.eval", "--predictions", str(predictions),
               "--output", str(out)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    entry = json.loads((out / "results.json").read_text())["benchmarks"]["ladder"]
    metrics = {name: m["value"] for name, m in entry["metrics"].items()}
    assert entry["primary"] == "level_mean_success" and entry["n"] == len(ids) == 5 * 4 + 2 * 4
    assert abs(metrics["level_mean_success"] - 1 / 5) < 1e-9
    assert abs(metrics["success"] - 8 / 28) < 1e-9  # level 0's 8 of the 28 samples
    assert metrics["success[level=0]"] == 1.0 and metrics["success[level=1]"] == 0.0
    assert metrics["success[source=procedural,level=0]"] == 1.0


def test_the_sampled_pool_is_the_pool_at_temperature_one() -> None:
    """`ladder_pool_t1` is read against `ladder_pool` episode by episode: the two declarations
    may differ only in name, description, comments and the sampling temperature."""
    greedy, sampled = (
        yaml.safe_load((ROOT / "benchmarks" / f"{name}.yaml").read_text())
        for name in ("ladder_pool", "ladder_pool_t1")
    )
    assert greedy["generation"]["temperature"] == 0.0
    assert sampled["generation"]["temperature"] == 1.0
    for declaration in (greedy, sampled):
        for key in ("name", "description"):
            del declaration[key]
        del declaration["generation"]["temperature"]
    assert sampled == greedy
