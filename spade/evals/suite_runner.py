"""`suite:NAME@VERSION`: play every env of a frozen suite on its evaluation seeds, no hints.

Sample ids are `ENV_ID/SEED`. Per sample: `success` (primary: terminated with reward 1.0),
`return` (the last reward, i.e. progress), and the same split by kind and skill, so the
summary reports success rate and mean return overall, per kind and per skill.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spade.evals.declarations import Declaration, Generation, Slices
from spade.evals.samples import ProgressCallback, SampleResult
from spade.rollout import EnvDriver, Episode, EpisodeSpec, Responder, play
from spade.suites import SuiteEnv, load_suite

PREFIX = "suite:"
WINDOW = 32
"""Episodes (each a sandboxed env worker) live at once."""


def suite_declaration(name: str) -> Declaration:
    """A declaration for `suite:NAME@VERSION`, built from the suite's manifest."""
    suite = load_suite(name.removeprefix(PREFIX))
    return Declaration(
        name=name,
        version=suite.manifest.version,
        description=f"frozen suite {suite.name}@{suite.manifest.version}: "
        f"{suite.manifest.description}",
        runner="suite",
        generation=Generation(max_gen_toks=192, temperature=0.0),
        scorer="success = terminated with reward 1.0; return = last step's reward",
        primary="success",
        slices=Slices(ci=4, quick=4, full=None),
        options={"path": str(suite.path)},
    )


class SuiteBenchmark:
    def __init__(self, declaration: Declaration) -> None:
        self.declaration = declaration
        self.suite = load_suite(declaration.options.get("path") or declaration.name[len(PREFIX) :])
        self.envs = {env.id: env for env in self.suite.envs}

    def sample_ids(self, data_dir: Path | None) -> list[str]:
        return [f"{env.id}/{seed}" for env in self.suite.envs for seed in env.entry.eval_seeds]

    def _spec(self, sample_id: str) -> tuple[EpisodeSpec, SuiteEnv]:
        env_id, _, seed = sample_id.rpartition("/")
        env = self.envs[env_id]
        # The turn cap is the episode rules' (`spade.envs.episode`): the env's own max_turns.
        return EpisodeSpec(sample_id, env.remote, int(seed)), env

    def run(
        self,
        ids: list[str],
        respond: Responder,
        data_dir: Path | None,
        progress: ProgressCallback | None = None,
    ) -> list[SampleResult]:
        specs = {sample_id: self._spec(sample_id) for sample_id in ids}
        name, sampling = self.declaration.name, self.declaration.generation.sampling()
        drivers = [EnvDriver(spec, name, sampling) for spec, _ in specs.values()]
        play(drivers, respond, phase=name, window=WINDOW,
             on_done=(lambda _: progress(1)) if progress else None)  # fmt: skip
        return [self._result(d.episode, specs[d.key][1]) for d in drivers]

    def _result(self, episode: Episode, env: SuiteEnv) -> SampleResult:
        success = float(episode.solved)
        metrics: dict[str, float] = {"return": episode.final_reward}
        for group in (f"kind={env.entry.kind}", f"skill={env.entry.skill}"):
            metrics[f"success[{group}]"] = success
            metrics[f"return[{group}]"] = episode.final_reward
        extra: dict[str, Any] = {
            "turns": len(episode.actions),
            "terminated": episode.terminated,
            "truncated": episode.truncated,
            "error": episode.error,
            "rewards": episode.rewards,
        }
        return SampleResult(
            benchmark=self.declaration.name,
            sample_id=episode.key,
            prompt=episode.messages[:2],
            output=episode.actions,
            answer=None,
            target=None,
            score=success,
            metrics=metrics,
            parsed=episode.error is None,
            extra=extra | {"transcript": episode.messages[2:]},
        )
