"""The adaptive pool in a run: the procedural tasks of `pool.tasks` as playable envs, and the
difficulty levels played and reached (each env's ceiling) as metrics."""

from __future__ import annotations

from functools import partial
from typing import Any

from spade.procedural import LevelScheduler, ProceduralEnv, TaskError
from spade.selfplay.agent_step import EnvPlays, PlayableEnv
from spade.selfplay.config import ConfigError, PoolConfig
from spade.selfplay.run_log import mean_or_nan


def procedural_envs(pool: PoolConfig) -> list[PlayableEnv]:
    """`pool.tasks` as playable in-process envs (keys `rg:TASK`); a bad task is a ConfigError.

    Training seeds lie below `TRAINING_SEED_SPAN` and the ladder's evaluation seeds above it,
    so a procedural item is never scored on a seed training drew."""
    envs = []
    for task, levels in pool.tasks.items():
        try:
            env = ProceduralEnv(task, pool.attempts, levels)
        except TaskError as exc:
            raise ConfigError(f"pool.tasks: {exc}") from None
        opener = partial(ProceduralEnv, task, pool.attempts, levels)
        envs.append(
            PlayableEnv(
                env.key,
                "",
                None,
                "reasoning",
                task,
                frozenset(),
                pool.attempts,
                env.spec.levels,
                opener=opener,
            )
        )
    return envs


def level_metrics(plays: list[EnvPlays], scheduler: LevelScheduler) -> dict[str, Any]:
    """The levels played and each env's ceiling (the curve `spade-train curves` draws)."""
    levels = [p.env.difficulty for p in plays if p.env.difficulty is not None]
    ceilings = scheduler.levels()
    if not levels and not ceilings:
        return {}
    return {
        "levels/played_mean": mean_or_nan([float(level) for level in levels]),
        "levels/ceiling_mean": mean_or_nan([float(c) for c in ceilings.values()]),
        "levels/ceiling_max": max(ceilings.values(), default=0),
        "levels/ceilings": ceilings,
    }
