"""The SPADE training loop: one policy, two roles, one update per iteration.

iteration = designer writes envs (grounded on a document, guided by memory) → sandbox checks
with repairs → hints (leak-checked) → agent plays each accepted env K times without and K
times with the hint on the same seeds → win rate, regret, designer reward → per-role
advantages → one GRPO update → memory update → checkpoint. `mode: fixed` is the
fixed-environment baseline: the same agent step and update on a frozen suite, no designer.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from tqdm import tqdm

from spade.atomic import write_atomic
from spade.corpus import CorpusOptions, open_corpus
from spade.distributed import ClusterError, EnvHosts
from spade.envs.remote import RemoteEnv
from spade.models.chat_template import ChatTokens
from spade.models.policy import Completion, SamplingParams
from spade.procedural import LevelScheduler
from spade.rl.checkpoint import latest_checkpoint
from spade.rl.learner import Learner, resolve_device
from spade.rollout import GenRequest, PolicyResponder, Responder
from spade.sandbox import SandboxConfig
from spade.selfplay import loop_state
from spade.selfplay.agent_step import (
    EnvPlays,
    PlayableEnv,
    Rollout,
    agent_samples,
    play_envs,
    refill,
    refill_metrics,
)
from spade.selfplay.config import (
    ConfigError,
    RayConfig,
    TrainConfig,
    dump_config,
)
from spade.selfplay.design_step import (
    Candidate,
    DesignTimes,
    design_requests,
    generate_candidates,
    known_designs,
    write_hints,
)
from spade.selfplay.designer_update import designer_rewards, designer_samples
from spade.selfplay.generation import make_engine
from spade.selfplay.iteration_records import (
    LOGGED_ENVS,
    design_record,
    iteration_metrics,
    play_records,
    sample_episodes,
)
from spade.selfplay.memory import (
    ColdStartEnv,
    EnvMemory,
    MemoryEntry,
    cold_start_envs,
    new_entry_id,
)
from spade.selfplay.pool import level_metrics, procedural_envs
from spade.selfplay.rewards import SkillEMA
from spade.selfplay.run_log import RunLog


class SelfPlayRun:
    def __init__(
        self,
        config: TrainConfig,
        run_dir: Path,
        suites_root: Path | None = None,
        start: Callable[[], str] | None = None,
    ):
        """`start`: called once the run's inputs are checked (corpus, suites, device), before
        any model loads; it returns the weights both roles start from (the agent bootstrap's,
        spade.selfplay.bootstrap, which takes minutes). None: `config.model`."""
        self.config = config
        self.run_dir = run_dir
        self.suites_root = suites_root
        self.sandbox: SandboxConfig = config.sandbox
        self.env_hosts = start_env_hosts(config.ray)  # first: a bad cluster fails fast
        self.open_env: Callable[..., RemoteEnv] = (
            self.env_hosts.open if self.env_hosts else RemoteEnv
        )
        self.corpus = None
        if config.mode == "spade" and not config.no_corpus:
            self.corpus = open_corpus(
                config.corpus.source,
                CorpusOptions(min_words=config.corpus.min_words, max_words=config.corpus.max_words),
            )
        self.cold_start = cold_start_envs(config.memory.cold_start_suite, suites_root)
        self.known_designs = known_designs(config.designer.known_designs)
        self.fixed_pool = self._fixed_pool() if config.mode == "fixed" else []
        update = config.update_config()
        resolve_device(update.device)  # a machine without the device: one line, before `start`
        self.learner = Learner(start() if start else config.model, update)
        self.chat_tokens = ChatTokens(self.learner.tokenizer)
        self.engine = make_engine(config, self.learner, run_dir)
        self.memory = EnvMemory(config.memory.capacity)
        self.ema = SkillEMA(config.reward.ema_alpha)
        self.scheduler = LevelScheduler(config.pool.scheduler)
        self.step = 0
        self.log = RunLog(run_dir)

    # -- set-up and resume ------------------------------------------------------------------
    def _fixed_pool(self) -> list[PlayableEnv]:
        """The suite's train envs (within the turn cap, with `agent.fit_turn_cap`), then the
        procedural tasks of `pool.tasks`."""
        return self._suite_pool(cold_start_envs(self.config.fixed_suite, self.suites_root))

    def _suite_pool(self, suite_envs: list[ColdStartEnv]) -> list[PlayableEnv]:
        """A suite's train envs with their levels (within the turn cap) and `pool.tasks`."""
        playable = [
            PlayableEnv(
                e.id, e.source, e.hint, e.kind, e.skill, e.eval_seeds, e.max_turns, e.levels
            )
            for e in suite_envs
        ]
        return self._within_turn_cap(playable) + procedural_envs(self.config.pool)

    def _within_turn_cap(self, pool: list[PlayableEnv]) -> list[PlayableEnv]:
        """With `agent.fit_turn_cap`, the suite envs whose stated budget fits in the turn cap:
        their plays end inside the task (terminated, with the partial credit earned), where
        a longer env's are mostly cut by the cap, truncated, and so masked from the update."""
        if not self.config.agent.fit_turn_cap:
            return pool
        cap = self.config.agent.turn_cap
        fitting = [env for env in pool if env.max_turns is None or env.max_turns <= cap]
        if not fitting:
            raise ConfigError(
                f"agent.fit_turn_cap: no train env states a budget of at most "
                f"agent.turn_cap={cap} turns"
            )
        return fitting

    def start(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        record_config(self.run_dir, self.config)

    def resume(self) -> None:
        if latest_checkpoint(self.run_dir / "checkpoints") is None:
            # Cut off before iteration 0 ended (e.g. in the agent bootstrap): begin it again.
            self.log.truncate_after(-1)
            self.start()
            return
        checkpoint = self.learner.load_checkpoint(self.run_dir / "checkpoints")
        state = loop_state.read(checkpoint)
        self.step = state.step
        self.ema = state.ema
        self.scheduler = LevelScheduler.from_json(state.scheduler, self.config.pool.scheduler)
        self.memory = EnvMemory.load(checkpoint, self.config.memory.capacity)
        self.memory.save(self.run_dir)
        self.log.truncate_after(self.step - 1)
        if self.step > 0:  # the engine starts from the base weights
            self.engine.sync()
        record_config(self.run_dir, self.config)  # --iterations

    # -- the loop -----------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        try:
            return self._iterations()
        finally:
            self.close()

    def close(self) -> None:
        """Stop the Ray env hosts, if the run has them (`ray.env_workers`)."""
        if self.env_hosts is not None:
            self.env_hosts.close()
            self.env_hosts = None

    def _iterations(self) -> dict[str, Any]:
        bar = tqdm(
            total=self.config.iterations,
            initial=self.step,
            desc="spade-train",
            unit="it",
            dynamic_ncols=True,
        )
        last: dict[str, Any] = {}
        while self.step < self.config.iterations:
            last = self.iteration()
            bar.update(1)
            shown = ("designer/validity_rate", "envs/win_rate", "envs/regret")
            bar.set_postfix({k: f"{last.get(k, 0):.2f}" for k in shown})
        bar.close()
        self.log.plot()
        return last

    def responder(self, step: int) -> Responder:
        """Generation with the current policy (no completion cache: the policy changes)."""
        policy = self.engine.policy()
        return PolicyResponder(policy, f"train/{step}", None, self.config.generation_batch_size)

    def iteration(self) -> dict[str, Any]:
        step, config = self.step, self.config
        rng = random.Random(f"{config.seed}/{step}")
        respond = _ProgressResponder(self.responder(step), step)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        candidates: list[Candidate] = []
        times = DesignTimes()
        if config.mode == "spade":
            requests = design_requests(config, rng, self.corpus, self.memory, self.cold_start)
            candidates = generate_candidates(
                requests,
                respond,
                config,
                rng.randrange(1 << 30),
                self.sandbox,
                self.memory,
                times,
                self.known_designs,
            )
            write_hints(candidates, respond, config, rng.randrange(1 << 30), self.sandbox, times)
        timings["designer_generation"] = times.generation
        timings["validation"] = times.validation
        envs = self._envs_to_play(candidates, rng)
        rollout_started = time.perf_counter()
        sampling = SamplingParams(
            max_new_tokens=config.agent.max_gen_toks,
            temperature=config.agent.temperature,
            seed=rng.randrange(1 << 30),
            logprobs=True,
        )
        rollout = Rollout(
            sampling, self.chat_tokens, self.learner.config.max_length, config.agent.turn_cap
        )
        timed = _TimedResponder(respond)
        plays = play_envs(
            [env for env, _ in envs],
            timed,
            config.agent.plays,
            rollout,
            rng,
            self.sandbox,
            with_hints=config.agent.hinted_plays,
            open_env=self.open_env,
        )
        refill_started = time.perf_counter()
        refilled = refill(
            plays,
            partial(self._fresh_envs, rng),
            partial(
                play_envs,
                respond=timed,
                plays=config.agent.plays,
                rollout=rollout,
                rng=rng,
                sandbox=self.sandbox,
                with_hints=False,
                open_env=self.open_env,
            ),
            config.agent.refill_rounds,
        )
        timings["refill"] = time.perf_counter() - refill_started  # part of the rollouts
        timings["rollouts"] = time.perf_counter() - rollout_started
        timings["rollout_generation"] = timed.seconds
        # Everything in the rollouts but the policy: env start, reset, step and close.
        timings["rollout_env"] = timings["rollouts"] - timed.seconds
        rewards = self._designer_rewards(candidates, plays, envs)
        designer = designer_samples(candidates, rewards)
        agent = agent_samples(plays + refilled)
        samples = agent + (designer if not config.no_designer_training else [])
        update_started = time.perf_counter()
        update = self.learner.update(samples).as_dict() if samples else {}
        timings["update"] = time.perf_counter() - update_started
        sync_started = time.perf_counter()
        if update.get("optimizer_steps"):  # the weights moved: the generator must follow
            self.engine.sync()
        timings["weight_sync"] = time.perf_counter() - sync_started
        remembered = self._remember(candidates, plays, envs)
        self._schedule(plays + refilled)
        self.step += 1
        respond.close()
        metrics: dict[str, Any] = {}
        checkpoint_started = time.perf_counter()

        def write_records() -> None:
            # Called inside the checkpoint, before it is published: a kill before the publish
            # leaves records that the resume from the previous checkpoint drops, one after it
            # leaves both, so no checkpoint is ever without its iteration's records.
            timings["checkpoint"] = time.perf_counter() - checkpoint_started
            timings["total"] = time.perf_counter() - started
            metrics.update(
                iteration_metrics(candidates, plays, envs, rewards, samples, update, timings)
            )
            metrics.update(refill_metrics(plays, refilled))
            metrics.update(level_metrics(plays, self.scheduler))
            self.log.write(step, metrics)
            self.log.write_designs(
                step, [design_record(c, remembered.get(id(c))) for c in candidates]
            )
            self.log.write_episodes(step, sample_episodes(plays, LOGGED_ENVS))
            self.log.write_plays(step, play_records(plays + refilled))

        self._checkpoint(then=write_records)
        return metrics

    def _envs_to_play(
        self, candidates: list[Candidate], rng: random.Random
    ) -> list[tuple[PlayableEnv, Candidate | None]]:
        """Accepted designs (with their candidate), then replayed memory/pool envs."""
        agent, designer = self.config.agent, self.config.designer
        if self.config.mode == "fixed":
            count = agent.envs_per_iteration or designer.designs_per_iteration * designer.group_size
            pool = self.fixed_pool
            return [
                (self._at_level(env, rng), None) for env in rng.sample(pool, min(count, len(pool)))
            ]
        chosen = [(self._new_design(c), c) for c in candidates if c.valid]
        # `envs_per_iteration`: replays fill up what the designs left, so the agent plays as
        # many envs as a fixed-mode run (whatever the designer's validity).
        wanted = max(agent.replay_envs, (agent.envs_per_iteration or 0) - len(chosen))
        remembered = [
            PlayableEnv(e.id, e.source, e.hint or None, e.kind, e.skill) for e in self.memory
        ]
        replay = rng.sample(remembered, min(wanted, len(remembered)))
        if len(replay) < wanted:  # memory holds too few envs yet: the cold-start pool's
            cold = self._cold_pool()
            replay += rng.sample(cold, min(wanted - len(replay), len(cold)))
        return chosen + [(self._at_level(env, rng), None) for env in replay]

    def _fresh_envs(self, rng: random.Random, count: int, played: set[str]) -> list[PlayableEnv]:
        """Up to `count` envs for a refill round, none of them `played` this iteration: from
        the fixed pool in fixed mode, else from memory and the cold-start pool (the replays')."""
        if self.config.mode == "fixed":
            pool = self.fixed_pool
        else:
            remembered = [
                PlayableEnv(e.id, e.source, e.hint or None, e.kind, e.skill) for e in self.memory
            ]
            pool = remembered + self._cold_pool()
        fresh = [env for env in pool if env.key not in played]
        return [self._at_level(env, rng) for env in rng.sample(fresh, min(count, len(fresh)))]

    def _cold_pool(self) -> list[PlayableEnv]:
        """What a replay falls back on while memory is short: the cold-start suite's train envs
        (with their levels) and the procedural tasks of `pool.tasks`. With the same suite as
        `fixed_suite`, this is the fixed arm's pool, so the two modes differ by the designs."""
        return self._suite_pool(self.cold_start)

    def _at_level(self, env: PlayableEnv, rng: random.Random) -> PlayableEnv:
        """`env` at the level the scheduler draws for it (`pool.schedule_levels`), else as is."""
        if not self.config.pool.schedule_levels or env.levels < 2:
            return env
        return replace(env, difficulty=self.scheduler.sample(env.key, env.levels, rng))

    def _new_design(self, candidate: Candidate) -> PlayableEnv:
        """A valid design as a playable env; one with difficulty levels is played where the
        scheduler starts a new env (`pool.scheduler.start`), not at its top level. A design
        is played once, so it gets no ceiling of its own."""
        request = candidate.request
        levels = candidate.report.difficulty_levels if candidate.report else 1
        env = PlayableEnv(
            candidate.group,
            candidate.code or "",
            candidate.hint,
            request.kind,
            request.skill,
            levels=levels,
        )
        if not self.config.pool.schedule_levels or levels < 2:
            return env
        return replace(env, difficulty=min(self.config.pool.scheduler.start, levels - 1))

    def _schedule(self, plays: list[EnvPlays]) -> None:
        """Count each unhinted play at its level: what the policy solves moves the ceilings."""
        for result in plays:
            level = result.env.difficulty
            if level is not None:
                for episode in result.unhinted:
                    self.scheduler.record(result.env.key, level, episode.solved)

    def _designer_rewards(
        self,
        candidates: list[Candidate],
        plays: list[EnvPlays],
        envs: list[tuple[PlayableEnv, Candidate | None]],
    ) -> dict[str, list[float | None]]:
        by_candidate = {id(c): p for (_, c), p in zip(envs, plays, strict=True) if c is not None}
        results = [by_candidate.get(id(c)) for c in candidates]
        return designer_rewards(candidates, results, self.config.reward, self.ema)

    def _remember(
        self,
        candidates: list[Candidate],
        plays: list[EnvPlays],
        envs: list[tuple[PlayableEnv, Candidate | None]],
    ) -> dict[int, dict[str, Any]]:
        """Record every played env in memory; returns, per accepted candidate (by `id`), its
        memory id, win rate and regret (what designs.jsonl reports beside the design)."""
        serial = 0
        accepted: dict[int, dict[str, Any]] = {}
        for (env, candidate), result in zip(envs, plays, strict=True):
            regret = result.regret if result.regret is not None else 0.0
            self.ema.update(env.skill, result.win_rate)
            if candidate is None:
                if env.key in self.memory:
                    self.memory.update(
                        env.key, win_rate=result.win_rate, regret=regret, step=self.step
                    )
                continue
            entry_id = new_entry_id(self.step, serial)
            self.memory.add(
                MemoryEntry(
                    id=entry_id,
                    source=env.source,
                    kind=env.kind,
                    skill=env.skill,
                    difficulty=candidate.request.difficulty,
                    document_id=candidate.request.document_id,
                    win_rate=result.win_rate,
                    regret=max(-1.0, min(1.0, regret)),
                    step=self.step,
                    hint=env.hint or "",
                    created_step=self.step,
                )
            )
            accepted[id(candidate)] = {
                "env_id": entry_id,
                "win_rate": result.win_rate,
                "regret": result.regret,
            }
            serial += 1
        self.memory.save(self.run_dir)
        return accepted

    def _checkpoint(self, then: Callable[[], None] | None = None) -> None:
        """Save the run's state; `then()` runs once it is all written, before the publish."""

        def extra(directory: Path) -> None:
            self.memory.save(directory)
            state = loop_state.LoopState(self.step, self.ema, self.scheduler.to_json())
            loop_state.write(directory, state)
            if then is not None:
                then()

        self.learner.save_checkpoint(
            self.run_dir / "checkpoints", extra=extra, keep_last=self.config.keep_checkpoints
        )

    def finish(self) -> Path:
        """Export the final policy as a HF model dir `spade-eval --checkpoint` takes."""
        return self.learner.export_hf(self.run_dir / "final")


def record_config(run_dir: Path, config: TrainConfig) -> None:
    """Write the run's config.yaml, what `--resume` reads (atomically: a kill keeps the old)."""
    write_atomic(run_dir / "config.yaml", dump_config(config))


def start_env_hosts(ray: RayConfig) -> EnvHosts | None:
    """`ray.env_workers` Ray actors to host the agent's env workers; None: they run here."""
    if not ray.env_workers:
        return None
    try:
        return EnvHosts.start(
            ray.address,
            ray.env_workers,
            ray.cpus_per_env_worker,
            f"ray.env_workers={ray.env_workers}",
        )
    except ClusterError as exc:
        raise ConfigError(f"ray: {exc}") from None


class _ProgressResponder:
    """Shows what an iteration is generating while it runs (an iteration takes minutes on a
    CPU): the phase of each batched call (designer, hint, agent) and completions so far."""

    def __init__(self, inner: Responder, step: int) -> None:
        self.inner = inner
        self.bar = tqdm(
            desc=f"  iteration {step}",
            unit=" completions",
            position=1,
            leave=False,
            dynamic_ncols=True,
        )

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[Completion]]:
        phases = "+".join(sorted({r.phase for r in requests}))
        self.bar.set_postfix_str(f"{phases}: {len(requests)} prompts", refresh=True)
        replies = self.inner(requests)
        self.bar.update(sum(len(r) for r in replies))
        return replies

    def close(self) -> None:
        self.bar.close()


class _TimedResponder:
    """A responder that adds up the wall time spent inside it (generation)."""

    def __init__(self, inner: Responder) -> None:
        self.inner = inner
        self.seconds = 0.0

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[Completion]]:
        started = time.perf_counter()
        try:
            return self.inner(requests)
        finally:
            self.seconds += time.perf_counter() - started
