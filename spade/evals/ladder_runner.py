"""`ladder` benchmarks: success per difficulty level, on frozen suite envs and procedural
tasks, played at fixed levels on evaluation seeds training never draws.

A sample is one episode of an env at one level: `ENV_ID@LEVEL/SEED` for a suite env (its
manifest's eval seeds, the first `seeds_per_level`), `rg:TASK@LEVEL/SEED` for a procedural
task (seeds from `PROCEDURAL_EVAL_SEED`, above every training seed). Per sample: `success`
(terminated with reward 1.0), `return`, and both per level, per source (suite or procedural)
and per env. The primary metric, `level_mean_success`, is the mean over levels of each
level's success rate: every sample's success weighted by the share of its level among the
samples scored, so a level with fewer samples (a task with fewer levels) counts as much.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from spade.evals.benchmark import check_known_ids
from spade.evals.declarations import Declaration, DeclarationError
from spade.evals.rg_tasks import require_version
from spade.evals.samples import ProgressCallback, SampleResult
from spade.evals.suite_runner import play_episodes, split_envs
from spade.procedural import PROCEDURAL_PREFIX, ProceduralEnv, TaskError
from spade.rollout import Episode, EpisodeSpec, Responder
from spade.suites import SPLITS, SuiteEnv, load_suite
from spade.suites.seeds import TRAINING_SEED_SPAN

PROCEDURAL_EVAL_SEED = TRAINING_SEED_SPAN
"""Procedural evaluation seeds are PROCEDURAL_EVAL_SEED + i: training draws below it."""


class LadderOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reasoning_gym_version: str = Field(description="the reasoning-gym release of the tasks")
    suite: str | None = Field(None, description="frozen suite NAME@VERSION whose envs have levels")
    split: str | None = Field(None, description="only this split's envs of the suite")
    tasks: dict[str, int] = Field(
        default_factory=dict, description="procedural tasks and how many curriculum levels each"
    )
    levels: list[int] = Field(min_length=1, description="levels every env is played at")
    seeds_per_level: int = Field(4, ge=1, description="episodes per env and level")
    attempts: int = Field(3, ge=1, description="answers a procedural episode allows")
    turn_cap: int | None = Field(None, ge=1, description="most turns an episode (a truncation)")


class LadderBenchmark:
    def __init__(self, declaration: Declaration) -> None:
        self.declaration = declaration
        self.options = declaration.typed_options(LadderOptions)
        if self.options.tasks:
            require_version(declaration, self.options.reasoning_gym_version)
        self.suite_envs = self._suite_envs()
        self.tasks = dict(self.options.tasks)
        for task, levels in self.tasks.items():
            try:
                ProceduralEnv(task, self.options.attempts, levels)
            except TaskError as exc:
                raise DeclarationError(f"{declaration.name}: options.tasks: {exc}") from None

    def _suite_envs(self) -> dict[str, SuiteEnv]:
        if self.options.suite is None:
            return {}
        suite = load_suite(self.options.suite)
        split = self.options.split
        if split is not None and split not in SPLITS:
            raise DeclarationError(
                f"{self.declaration.name}: options.split {split!r} is not one "
                f"of {', '.join(SPLITS)}"
            )
        envs = split_envs(suite, split, self.declaration.name)
        flat = [e.id for e in envs if not e.entry.difficulty_levels]
        if flat:
            raise DeclarationError(
                f"{self.declaration.name}: {suite.ref} envs without difficulty "
                f"levels: {', '.join(flat[:3])}"
            )
        return {env.id: env for env in envs}

    def sample_ids(self, data_dir: Path | None) -> list[str]:
        n, ids = self.options.seeds_per_level, []
        for level in self.options.levels:
            for env in self.suite_envs.values():
                if level < (env.entry.difficulty_levels or 1):
                    ids += [f"{env.id}@{level}/{seed}" for seed in env.entry.eval_seeds[:n]]
            for task, levels in self.tasks.items():
                if level < levels:
                    seeds = range(PROCEDURAL_EVAL_SEED, PROCEDURAL_EVAL_SEED + n)
                    ids += [f"{PROCEDURAL_PREFIX}{task}@{level}/{seed}" for seed in seeds]
        return ids

    def _spec(self, sample_id: str) -> EpisodeSpec:
        head, _, seed = sample_id.rpartition("/")
        key, _, level = head.rpartition("@")
        if key.startswith(PROCEDURAL_PREFIX):
            task = key.removeprefix(PROCEDURAL_PREFIX)
            make: Any = partial(ProceduralEnv, task, self.options.attempts, self.tasks[task])
        else:
            make = self.suite_envs[key].remote
        return EpisodeSpec(sample_id, make, int(seed), None, self.options.turn_cap, int(level))

    def run(
        self,
        ids: list[str],
        respond: Responder,
        data_dir: Path | None,
        progress: ProgressCallback | None = None,
    ) -> list[SampleResult]:
        check_known_ids(self.declaration.name, ids, dict.fromkeys(self.sample_ids(data_dir)))
        specs = [self._spec(sample_id) for sample_id in ids]
        episodes = play_episodes(self.declaration, specs, respond, progress)
        per_level: dict[str, int] = {}
        for sample_id in ids:
            level = _level(sample_id)
            per_level[level] = per_level.get(level, 0) + 1
        return [self._result(episode, per_level, len(ids)) for episode in episodes]

    def _result(self, episode: Episode, per_level: dict[str, int], total: int) -> SampleResult:
        level, key = _level(episode.key), episode.key.rpartition("@")[0]
        source = "procedural" if key.startswith(PROCEDURAL_PREFIX) else "suite"
        success = float(episode.solved)
        # Weighted so the plain mean over samples is the mean over levels of their success.
        weight = total / (len(per_level) * per_level[level])
        metrics: dict[str, float] = {"success": success, "return": episode.final_reward}
        for group in (
            f"level={level}",
            f"source={source}",
            f"env={key}",
            f"source={source},level={level}",
        ):
            metrics[f"success[{group}]"] = success
            metrics[f"return[{group}]"] = episode.final_reward
        return SampleResult(
            benchmark=self.declaration.name,
            sample_id=episode.key,
            prompt=episode.messages[:2],
            output=episode.actions,
            answer=None,
            target=None,
            score=success * weight,
            metrics=metrics,
            parsed=episode.error is None,
            extra={
                "turns": len(episode.actions),
                "terminated": episode.terminated,
                "truncated": episode.truncated,
                "error": episode.error,
                "rewards": episode.rewards,
                "transcript": episode.messages[2:],
            },
        )


def _level(sample_id: str) -> str:
    return sample_id.rpartition("/")[0].rpartition("@")[2]
