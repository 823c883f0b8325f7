"""spade-seed@1.2.0: the envs of 1.1.0 with difficulty levels 0-4.

The top level (the default) is 1.1.0's env, seed for seed; level 0 fits a short episode. A
level is taken at `reset(seed, options={"difficulty": d})` (the env contract).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spade.envs.episode import EnvEpisode, play_actions
from spade.envs.random_agent import random_policy
from spade.envs.remote import RemoteEnv
from spade.suites import SEED_SUITE, Suite, load_suite, verify_suite

ROOT = Path(__file__).resolve().parents[2] / "envs_snapshots"
LEVELS = 5
REWARD_CHANGED = {"HiddenNumberEnv"}
"""Top-level rewards changed on purpose: 0.9 x the share of the range ruled out paid random
guessing 0.54; it is now 0.5 x that share."""


@pytest.fixture(scope="module")
def levelled() -> Suite:
    return load_suite(f"{SEED_SUITE}@1.2.0", ROOT)


@pytest.fixture(scope="module")
def previous() -> Suite:
    return load_suite(f"{SEED_SUITE}@1.1.0", ROOT)


def test_the_levelled_suite_verifies() -> None:
    report = verify_suite(f"{SEED_SUITE}@1.2.0", ROOT, recheck=False)
    assert report.ok, [f"{p.file}: {p.message}" for p in report.problems]


def test_every_env_has_five_levels_and_keeps_its_id_split_and_seeds(
    levelled: Suite, previous: Suite
) -> None:
    assert [e.entry.id for e in levelled] == [e.entry.id for e in previous]
    for new, old in zip(levelled, previous, strict=True):
        assert new.entry.difficulty_levels == LEVELS, new.entry.id
        assert (new.entry.split, new.entry.eval_seeds, new.entry.max_turns) == (
            old.entry.split, old.entry.eval_seeds, old.entry.max_turns
        )  # fmt: skip
        checks = {c["name"]: c["passed"] for c in new.entry.validation["checks"]}
        assert checks["difficulty_levels"] and checks["no_free_credit"], new.entry.id


def _trace(episode: EnvEpisode, rewards: bool) -> list[object]:
    steps = [(s.observation, s.terminated, s.truncated) + ((s.reward,) if rewards else ())
             for s in episode.steps]  # fmt: skip
    return [episode.observations[0], *steps]


def test_the_top_level_is_1_1_0_seed_for_seed(levelled: Suite, previous: Suite) -> None:
    for new, old in zip(levelled, previous, strict=True):
        rewards = new.entry.class_name not in REWARD_CHANGED
        with RemoteEnv(new.source()) as a, RemoteEnv(old.source()) as b:
            for seed in new.entry.eval_seeds[:2]:
                for level in (None, LEVELS - 1):
                    a.reset(seed, level)
                    b.reset(seed)
                    assert a.solution() == b.solution(), (new.entry.id, seed)
                    for actions in (a.solution(), random_policy(seed, a.spec.tools)):
                        ours = play_actions(a, seed, actions, difficulty=level)
                        again = actions if isinstance(actions, list) else random_policy(
                            seed, b.spec.tools)  # fmt: skip
                        theirs = play_actions(b, seed, again)
                        assert _trace(ours, rewards) == _trace(theirs, rewards), new.entry.id


def test_level_0_fits_a_short_episode(levelled: Suite) -> None:
    for env in levelled:
        with RemoteEnv(env.source()) as remote:
            for seed in env.entry.eval_seeds[:3]:
                remote.reset(seed, 0)
                budget, solution = remote.spec.max_turns, remote.solution()
                assert budget is not None and budget <= 6, (env.entry.id, budget)
                assert len(solution) <= budget and max(map(len, solution)) <= 120, env.entry.id
                assert play_actions(remote, seed, solution, difficulty=0).solved, env.entry.id
