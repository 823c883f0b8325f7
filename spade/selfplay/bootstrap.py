"""The agent bootstrap: a short SFT on teacher play before a run that starts from a bare model.

A built-in model (the embedded SmolLM2-135M-Instruct) has never seen an env's action syntax:
every reply is prose, every play earns the same 0, and no sample carries gradient, so plain
`spade-train` never updated its agent (experiments/plain-train-bootstrap: 0 of 32 samples with
gradient; after this bootstrap, 16 of 32). With `bootstrap.agent: auto` such a run first
builds a tiny warm start (spade.selfplay.warmup.run) in RUN_DIR/bootstrap — teacher episodes
of the train envs at level 0 and reference answers of the pool's tasks, agent examples only —
and starts both roles from it. A run that starts from a warm start or a checkpoint directory
(every recipe of configs/ladder) is left as it was.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from spade.models.builtin import BUILTIN_MODELS
from spade.selfplay.config import TrainConfig
from spade.selfplay.warmup.run import WarmupConfig, WarmupReport, run_warmup

BOOTSTRAP_DIR = "bootstrap"
"""The bootstrap's warm-start directory inside the run directory."""


def applies(config: TrainConfig) -> bool:
    """Whether the run bootstraps its agent: `auto` and a built-in (never trained) model."""
    return config.bootstrap.agent == "auto" and config.model in BUILTIN_MODELS


def warmup_config(config: TrainConfig) -> WarmupConfig:
    """The bootstrap's warm-start recipe, drawn from the run's own settings: the suite its
    agent plays (the fixed pool's, or the cold-start references a spade run replays), the
    pool's tasks, the run's seed and sandbox."""
    boot = config.bootstrap
    suite = config.fixed_suite if config.mode == "fixed" else config.memory.cold_start_suite
    return WarmupConfig(
        model=config.model,
        suite=suite,
        agent_episodes_per_env=boot.episodes_per_env,
        agent_levels=list(boot.levels),
        pool_tasks=dict(config.pool.tasks) if boot.pool_episodes_per_task else {},
        pool_episodes_per_task=boot.pool_episodes_per_task,
        pool_attempts=config.pool.attempts,
        designer_examples=0,
        sft=dict(boot.sft),
        seed=config.seed,
        sandbox=config.sandbox,
    )


def start_model(config: TrainConfig, run_dir: Path, resume: bool) -> str:
    """The model the run starts from: `config.model`, or its bootstrap (built here when it
    is not there yet, continued when a kill cut it short)."""
    if not applies(config):
        return config.model
    boot_dir = run_dir / BOOTSTRAP_DIR
    model_dir = boot_dir / "sft" / "model"
    if (model_dir / "config.json").is_file():
        return str(model_dir)
    if resume and not boot_dir.exists() and (run_dir / "checkpoints").is_dir():
        return config.model  # a run from before the bootstrap: its checkpoints build on this
    print(f"bootstrap: agent SFT on teacher play before iteration 0 ({boot_dir})", file=sys.stderr)
    report = run_warmup(warmup_config(config), boot_dir, resume=boot_dir.exists())
    # The trainer's checkpoints (weights and optimizer state, ~1.5 GB for the 135M model) only
    # serve a resume of the fine-tune, which is finished.
    shutil.rmtree(boot_dir / "sft" / "checkpoints", ignore_errors=True)
    print(describe(report), file=sys.stderr)
    return str(report.model_dir)


def describe(report: WarmupReport) -> str:
    """One line: what the bootstrap trained on, and how long it took."""
    loss = ""
    if report.first_loss is not None and report.last_loss is not None:
        loss = f", loss {report.first_loss:.3f} -> {report.last_loss:.3f}"
    seconds = ", ".join(f"{part} {s:.0f} s" for part, s in report.seconds.items())
    return (
        f"bootstrap: {report.examples.get('agent', 0)} agent examples, {report.steps} optimizer "
        f"steps{loss} ({seconds}); the run starts from {report.model_dir}"
    )
