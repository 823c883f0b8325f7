"""Training never plays a held-out env of the seed suite, nor any env on an evaluation seed.

Both training modes are built for real (a tiny model, the shipped spade-seed@1.1.0, which the
config defaults name): everything either mode can play (the fixed baseline's pool, the
cold-start envs the designer sees as references and replays) is a `train` env carrying its
eval seeds, and the seeds the agent step draws for a play avoid them.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from spade.models.policy import SamplingParams
from spade.rollout import GenRequest
from spade.sandbox import SandboxConfig
from spade.selfplay.agent_step import PlayableEnv, Rollout, play_envs
from spade.selfplay.config import TrainConfig, load_config
from spade.selfplay.loop import SelfPlayRun
from spade.selfplay.memory import cold_start_envs
from spade.suites import Suite, load_suite, training_seeds
from spade.suites.seeds import TRAINING_SEED_SPAN
from tests.replies import text_responder

ROOT = Path(__file__).resolve().parents[2] / "envs_snapshots"


@pytest.fixture(scope="module")
def seed_suite() -> Suite:
    return load_suite(TrainConfig().fixed_suite, ROOT)


def test_the_default_training_suites_hold_heldout_envs(seed_suite: Suite) -> None:
    defaults = TrainConfig()
    assert defaults.memory.cold_start_suite == defaults.fixed_suite == seed_suite.ref
    assert len(seed_suite.envs_in("heldout")) == 12  # so the exclusion below is not vacuous


def test_cold_start_envs_are_the_train_envs_with_their_eval_seeds(seed_suite: Suite) -> None:
    envs = cold_start_envs(seed_suite.ref, ROOT)
    assert [env.id for env in envs] == [env.id for env in seed_suite.envs_in("train")]
    for env in envs:
        assert env.eval_seeds == frozenset(seed_suite.env(env.id).entry.eval_seeds)


def test_an_unsplit_suite_is_all_train() -> None:
    assert len(cold_start_envs("spade-seed@1.0.0", ROOT)) == 34


@pytest.mark.parametrize("mode", ["fixed", "spade"])
def test_no_training_mode_can_play_a_heldout_env(
    mode: str, tiny_model_dir: Path, tmp_path: Path, seed_suite: Suite
) -> None:
    # Pools as large as the suite (no procedural tasks: they have no held-out split), so one
    # draw of the envs to play is everything playable.
    overrides = {"model": str(tiny_model_dir), "mode": mode, "corpus.source": None,
                 "designer.designs_per_iteration": 17, "designer.group_size": 2,
                 "agent.replay_envs": 34, "freeze_at_end": False,
                 "generation.backend": "live", "pool.tasks": {},
                 "agent.envs_per_iteration": 34}  # fmt: skip
    run = SelfPlayRun(load_config(None, overrides), tmp_path / "run", ROOT)
    train = {env.id: env for env in seed_suite.envs_in("train")}
    assert [env.id for env in run.cold_start] == list(train)
    assert [env.key for env in run.fixed_pool] == (list(train) if mode == "fixed" else [])
    playable = [env for env, _ in run._envs_to_play([], random.Random(0))]
    assert sorted(env.key for env in playable) == sorted(train)
    for env in playable:
        assert env.eval_seeds == frozenset(train[env.key].entry.eval_seeds), env.key


class _DrawsEvalSeedsFirst(random.Random):
    """An rng whose first draws are the given seeds (a worst case for the exclusion)."""

    def __init__(self, first: list[int]) -> None:
        super().__init__(0)
        self.first = list(first)

    def randrange(self, *args: int) -> int:  # type: ignore[override]
        return self.first.pop(0) if self.first else super().randrange(*args)


def test_a_play_never_draws_an_eval_seed(seed_suite: Suite) -> None:
    suite_env = seed_suite.env("HiddenNumberEnv")
    eval_seeds = suite_env.entry.eval_seeds
    env = PlayableEnv(suite_env.id, suite_env.source(), suite_env.entry.hint,
                      eval_seeds=frozenset(eval_seeds))  # fmt: skip

    @text_responder
    def guess(requests: list[GenRequest]) -> list[list[str]]:
        return [["\\boxed{1}"] for _ in requests]

    # Text-in rollouts (no chat tokens): what is checked is which seeds get played.
    rollout = Rollout(SamplingParams(max_new_tokens=8), None, 4096, turn_cap=1)  # type: ignore[arg-type]
    rng = _DrawsEvalSeedsFirst(eval_seeds[:3] + [7, eval_seeds[3], 8])
    (plays,) = play_envs([env], guess, 3, rollout, rng, SandboxConfig(), with_hints=False)
    assert plays.seeds == [7, 8, plays.seeds[2]]
    assert not set(plays.seeds) & set(eval_seeds)
    assert sorted(episode.seed for episode in plays.unhinted) == sorted(plays.seeds)


def test_training_seeds_skip_every_avoided_seed_and_are_plain_draws_otherwise() -> None:
    for seed in range(300):
        ahead = random.Random(seed)
        draws = [ahead.randrange(TRAINING_SEED_SPAN) for _ in range(12)]
        avoid = set(draws[::2])  # every other draw clashes
        got = training_seeds(random.Random(seed), 6, avoid)
        assert got == draws[1::2] and not set(got) & avoid
        assert training_seeds(random.Random(seed), 12) == draws


def test_many_clashing_draws_never_yield_an_eval_seed(seed_suite: Suite) -> None:
    for env in seed_suite.envs_in("train"):
        avoid = frozenset(env.entry.eval_seeds)
        window = sorted(avoid) + list(range(40))  # a fifth of its values are eval seeds
        picker = random.Random(env.id)
        rng = _DrawsEvalSeedsFirst([picker.choice(window) for _ in range(1000)])
        got = training_seeds(rng, 500, avoid)
        assert len(got) == 500 and not set(got) & avoid
