"""`suite:NAME@VERSION`: play every env of a frozen suite on its evaluation seeds, no hints.

`suite:NAME@VERSION:SPLIT` plays only the envs of one split (`heldout`: the envs training
never plays; `train`: the others, on their eval seeds, which training never draws either).
Sample ids are `ENV_ID/SEED`. Per sample: `success` (primary: terminated with reward 1.0),
`return` (the last reward, i.e. progress), and the same split by kind and skill, so the
summary reports success rate and mean return overall, per kind and per skill.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from spade.evals.benchmark import check_known_ids
from spade.evals.declarations import Declaration, DeclarationError, Generation, Slices
from spade.evals.samples import ProgressCallback, SampleResult
from spade.rollout import EnvDriver, Episode, EpisodeSpec, Responder, play
from spade.suites import SPLITS, Suite, SuiteEnv, load_suite

PREFIX = "suite:"
WINDOW = 32
"""Episodes (each a sandboxed env worker) live at once."""


class SuiteOptions(BaseModel):
    """The `options:` of a suite benchmark (from its manifest, or a preset's override)."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(None, description="the suite's folder, for a suite given as one")
    split: str | None = Field(None, description="play only this split's envs")
    turn_cap: int | None = Field(
        None,
        ge=1,
        description="at most this many turns an episode (each env's own max_turns when that "
        "is lower); an episode it ends is truncated (a limit outside the task) and scores its "
        "progress so far",
    )


def parse_suite_name(name: str) -> tuple[str, str | None]:
    """(suite reference, split or None) of `suite:NAME@VERSION[:SPLIT]` (or `suite:PATH`)."""
    ref = name.removeprefix(PREFIX)
    head, colon, tail = ref.rpartition(":")
    if colon and (tail in SPLITS or "@" in head):  # a version never holds a ':'
        if tail not in SPLITS:
            raise DeclarationError(f"{name}: unknown split {tail!r}; known: {', '.join(SPLITS)}")
        return head, tail
    return ref, None


def split_envs(suite: Suite, split: str | None, name: str) -> list[SuiteEnv]:
    """The envs a suite benchmark plays: all, or one split's (never none)."""
    if split is None:
        return list(suite.envs)
    envs = suite.envs_in(split)
    if not envs:
        unsplit = "" if any(env.entry.split for env in suite.envs) else " (an unsplit suite)"
        raise DeclarationError(f"{name}: suite {suite.ref} has no {split} envs{unsplit}")
    return envs


def suite_declaration(name: str) -> Declaration:
    """A declaration for `suite:NAME@VERSION[:SPLIT]`, built from the suite's manifest."""
    ref, split = parse_suite_name(name)
    suite = load_suite(ref)
    envs = split_envs(suite, split, name)
    scope = f", {split} split ({len(envs)} of {len(suite)} envs)" if split else ""
    return Declaration(
        name=name,
        version=suite.manifest.version,
        description=f"frozen suite {suite.name}@{suite.manifest.version}{scope}: "
        f"{suite.manifest.description}",
        runner="suite",
        generation=Generation(max_gen_toks=192, temperature=0.0),
        scorer="success = terminated with reward 1.0; return = last step's reward",
        primary="success",
        slices=Slices(ci=4, quick=4, full=None),
        # A suite named NAME@VERSION is found the same way wherever the run is read: only a
        # suite given as a folder records it (a machine's own path would make two machines'
        # results look like different settings).
        options=({} if _named(ref) else {"path": str(suite.path)})
        | ({"split": split} if split else {}),
    )


def play_episodes(
    declaration: Declaration,
    specs: list[EpisodeSpec],
    respond: Responder,
    progress: ProgressCallback | None = None,
) -> list[Episode]:
    """Every episode of `specs`, played without hints under the declaration's generation
    settings, `WINDOW` envs at once; in the order of `specs`."""
    name, sampling = declaration.name, declaration.generation.sampling()
    drivers = [EnvDriver(spec, name, sampling) for spec in specs]
    play(
        drivers,
        respond,
        phase=name,
        window=WINDOW,
        on_done=(lambda _: progress(1)) if progress else None,
    )
    return [driver.episode for driver in drivers]


def _named(ref: str) -> bool:
    """Whether `ref` names a frozen suite (NAME@VERSION) rather than a folder."""
    return "@" in ref and not Path(ref).exists()


class SuiteBenchmark:
    def __init__(self, declaration: Declaration) -> None:
        self.declaration = declaration
        ref, split = parse_suite_name(declaration.name)
        self.options = declaration.typed_options(SuiteOptions)
        self.suite = load_suite(self.options.path or ref)
        envs = split_envs(self.suite, self.options.split or split, declaration.name)
        self.envs = {env.id: env for env in envs}

    def sample_ids(self, data_dir: Path | None) -> list[str]:
        return [f"{env.id}/{seed}" for env in self.envs.values() for seed in env.entry.eval_seeds]

    def _spec(self, sample_id: str) -> tuple[EpisodeSpec, SuiteEnv]:
        env_id, _, seed = sample_id.rpartition("/")
        env = self.envs[env_id]
        # The turn cap is the episode rules' (`spade.envs.episode`): the env's own max_turns,
        # unless the options set a lower one.
        cap = self.options.turn_cap
        if cap is not None and env.entry.max_turns is not None:
            cap = min(cap, env.entry.max_turns)
        return EpisodeSpec(sample_id, env.remote, int(seed), turn_cap=cap), env

    def run(
        self,
        ids: list[str],
        respond: Responder,
        data_dir: Path | None,
        progress: ProgressCallback | None = None,
    ) -> list[SampleResult]:
        # Only this benchmark's envs on their eval seeds: a `:heldout` score never plays a
        # train env, nor a seed training may have drawn.
        check_known_ids(self.declaration.name, ids, dict.fromkeys(self.sample_ids(data_dir)))
        specs = {sample_id: self._spec(sample_id) for sample_id in ids}
        episodes = play_episodes(
            self.declaration, [s for s, _ in specs.values()], respond, progress
        )
        return [self._result(episode, specs[episode.key][1]) for episode in episodes]

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
