"""The agent bootstrap (spade.selfplay.bootstrap): when a run takes it, what it trains on, and
how a run reuses, resumes or skips it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spade.selfplay.bootstrap import BOOTSTRAP_DIR, applies, start_model, warmup_config
from spade.selfplay.config import ConfigError, load_config
from spade.selfplay.loop import SelfPlayRun
from tests.selfplay.test_loop import tiny_config


def test_only_a_run_from_a_built_in_model_bootstraps(tmp_path: Path) -> None:
    assert applies(load_config(None))  # plain spade-train: the embedded smollm2-135m
    assert not applies(load_config(None, {"bootstrap.agent": "off"}))
    # A warm start or checkpoint directory (every ladder recipe) is used as it is.
    assert not applies(load_config(None, {"model": str(tmp_path / "warm")}))
    assert start_model(load_config(None, {"bootstrap.agent": "off"}), tmp_path, False) == (
        "smollm2-135m"
    )


def test_the_bootstrap_plays_the_suite_the_run_plays_and_teaches_the_agent_only() -> None:
    spade = warmup_config(load_config(None, {"seed": 7, "memory.cold_start_suite": "x@1.0.0"}))
    fixed = warmup_config(load_config(None, {"mode": "fixed", "fixed_suite": "y@1.0.0"}))
    assert (spade.suite, fixed.suite) == ("x@1.0.0", "y@1.0.0")
    assert spade.designer_examples == 0 and spade.seed == 7 and spade.agent_levels == [0]
    assert spade.pool_tasks == load_config(None).pool.tasks and spade.pool_episodes_per_task == 6
    no_pool = warmup_config(load_config(None, {"bootstrap.pool_episodes_per_task": 0}))
    assert no_pool.pool_tasks == {}
    assert spade.sft_config().lr == 1e-4 and spade.sft_config().epochs == 1


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"bootstrap.sft.bogus": 1}, "bootstrap.sft: unexpected keyword argument 'bogus'"),
        ({"bootstrap.sft.lr": 0}, "bootstrap.sft: warmup.lr must be > 0"),
        ({"bootstrap.levels": []}, "bootstrap.levels"),
        ({"bootstrap.agent": "always"}, "bootstrap.agent"),
    ],
)
def test_a_bad_bootstrap_setting_is_refused_when_the_config_loads(
    setting: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(None, setting)


def test_a_finished_bootstrap_is_reused_and_a_run_from_before_it_is_not_given_one(
    tmp_path: Path,
) -> None:
    config = load_config(None)
    model = tmp_path / "run" / BOOTSTRAP_DIR / "sft" / "model"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    assert start_model(config, tmp_path / "run", resume=True) == str(model)
    # Checkpoints and no bootstrap folder: the run began on the bare model, and goes on so.
    (tmp_path / "old" / "checkpoints").mkdir(parents=True)
    assert start_model(config, tmp_path / "old", resume=True) == "smollm2-135m"


def test_a_run_cut_off_before_its_first_checkpoint_resumes_from_the_start(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    config = load_config(None, tiny_config(tiny_model_dir))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "metrics.jsonl").write_text(json.dumps({"step": 0, "agent/return": 0.5}) + "\n")
    run = SelfPlayRun(config, run_dir, start=lambda: str(tiny_model_dir))
    run.resume()  # was: "holds no complete checkpoint"
    assert run.step == 0 and (run_dir / "config.yaml").is_file()
    assert (run_dir / "metrics.jsonl").read_text() == ""  # the cut iteration is redone


@pytest.mark.parametrize("rank", ["0", "1"])
def test_a_launched_run_from_a_built_in_model_is_one_line_on_every_rank(
    tmp_path: Path, rank: str
) -> None:
    env = {**os.environ, "WORLD_SIZE": "2", "RANK": rank, "LOCAL_RANK": rank}
    result = subprocess.run(
        [sys.executable, "-m", "spade.cli.train", "--run-dir", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if not line.startswith("warning")]
    assert len(lines) == 1 and "bootstrap.agent=off" in lines[0], result.stderr
    assert not (tmp_path / "run" / BOOTSTRAP_DIR).exists()


@pytest.mark.slow
def test_the_bootstrap_fine_tunes_the_built_in_model_once(tmp_path: Path) -> None:
    """The real thing, cut small: teacher episodes of the seed suite's train envs at level 0
    in the sandbox, a real SFT of smollm2-135m, and a second call that trains nothing."""
    tiny = {
        "bootstrap.episodes_per_env": 1,
        "bootstrap.pool_episodes_per_task": 1,
        "pool.tasks": {"family_relationships": 1},
        "bootstrap.sft.max_length": 512,
    }
    config = load_config(None, tiny)
    run_dir = tmp_path / "run"
    model = Path(start_model(config, run_dir, resume=False))
    assert model == run_dir / BOOTSTRAP_DIR / "sft" / "model"
    assert (model / "config.json").is_file()
    assert not (run_dir / BOOTSTRAP_DIR / "sft" / "checkpoints").exists()  # resume-only state
    ids = [
        json.loads(line)["env_id"]
        for line in (run_dir / BOOTSTRAP_DIR / "data" / "agent.jsonl").open()
    ]
    assert "rg:family_relationships" in ids and any(i.startswith("spade-seed/") for i in ids)
    stamp = (model / "config.json").stat().st_mtime_ns
    assert start_model(config, run_dir, resume=True) == str(model)
    assert (model / "config.json").stat().st_mtime_ns == stamp
