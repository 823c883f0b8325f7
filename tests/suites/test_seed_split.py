"""spade-seed@1.1.0: the envs of 1.0.0 with a held-out split and terminal turn budgets.

A budget the task text states is part of the task: running out of it ends the episode with
`terminated=True` and the progress earned (1.0.0 truncated there). Everything else an agent or
a reference player sees is 1.0.0's: ids, eval seeds, observations, rewards, solutions.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from spade.envs.episode import EnvEpisode, play_actions
from spade.envs.random_agent import RandomAgent, agent_seed
from spade.suites import SEED_SUITE, Suite, SuiteEnv, SuiteError, load_suite, verify_suite

ROOT = Path(__file__).resolve().parents[2] / "envs_snapshots"
SPLIT_LINE = re.compile(r'\n        "split": "(train|heldout)",\n')
UNSTATED_BUDGET = {
    "BillPaymentEnv", "CappedNimEnv", "EmailTriageEnv", "FileOrganizerEnv", "HighLowEnv",
    "LibraryLoansEnv", "MeetingSchedulerEnv", "MinesweeperEnv", "ProjectPlannerEnv",
    "RestaurantSeatingEnv", "ShoppingBudgetEnv", "SmartHomeEnv", "SpreadsheetAuditEnv",
    "WarehouseOrdersEnv",
}  # fmt: skip
"""Envs whose task text states no turn budget: their limit stays a truncation."""


@pytest.fixture(scope="module")
def split() -> Suite:
    return load_suite(f"{SEED_SUITE}@1.1.0", ROOT)


@pytest.fixture(scope="module")
def unsplit() -> Suite:
    return load_suite(f"{SEED_SUITE}@1.0.0", ROOT)


def test_the_split_suite_verifies() -> None:
    report = verify_suite(f"{SEED_SUITE}@1.1.0", ROOT, recheck=False)
    assert report.ok, [f"{p.file}: {p.message}" for p in report.problems]


@pytest.mark.slow
def test_the_split_suite_verifies_with_the_sandbox_recheck() -> None:
    report = verify_suite(f"{SEED_SUITE}@1.1.0", ROOT)
    assert report.ok and report.rechecked, [f"{p.file}: {p.message}" for p in report.problems]


def test_a_third_is_held_out_with_every_kind_and_shared_skill_on_both_sides(split: Suite) -> None:
    heldout, train = split.envs_in("heldout"), split.envs_in("train")
    assert (len(heldout), len(train)) == (12, 22)
    assert all(env.entry.split in ("train", "heldout") for env in split)
    assert Counter(env.entry.kind for env in heldout) == {"game": 4, "reasoning": 4, "tool_use": 4}
    assert {env.entry.kind for env in train} == {"game", "reasoning", "tool_use"}
    assert {env.entry.difficulty for env in heldout} == {"easy", "medium", "hard"}
    shared = [s for s, n in Counter(env.entry.skill for env in split).items() if n > 1]
    assert sorted(shared) == ["deduction", "information gathering", "planning", "search"]
    for skill in shared:
        sides = {env.split for env in split if env.entry.skill == skill}
        assert sides == {"train", "heldout"}, skill


def test_ids_eval_seeds_and_reference_scores_are_those_of_1_0_0(
    split: Suite, unsplit: Suite
) -> None:
    assert [env.id for env in split] == [env.id for env in unsplit]
    keep = ("kind", "skill", "difficulty", "hint", "eval_seeds", "max_turns", "tools",
            "reference_scores", "class_name", "file")  # fmt: skip
    for new, old in zip(split, unsplit, strict=True):
        assert {k: getattr(new.entry, k) for k in keep} == {k: getattr(old.entry, k) for k in keep}
    assert all(env.entry.split is None for env in unsplit)
    assert unsplit.envs_in("train") == unsplit.envs and unsplit.envs_in("heldout") == []


def test_envs_without_a_stated_budget_differ_from_1_0_0_only_by_their_split(
    split: Suite, unsplit: Suite
) -> None:
    changed = set()
    for new, old in zip(split, unsplit, strict=True):
        source, count = SPLIT_LINE.subn("\n", new.source())
        assert count == 1, new.id
        if source != old.source():
            changed.add(new.entry.class_name)
    assert changed == {env.entry.class_name for env in split} - UNSTATED_BUDGET


def test_an_unknown_split_is_a_one_line_error(split: Suite) -> None:
    with pytest.raises(SuiteError, match=r"unknown split 'test'; known: train, heldout"):
        split.envs_in("test")


def _play_both(
    split: Suite, unsplit: Suite, name: str, actions: list[str]
) -> tuple[EnvEpisode, EnvEpisode]:
    new, old = split.env(name), unsplit.env(name)
    seed = new.entry.eval_seeds[0]
    with new.remote() as a, old.remote() as b:
        return play_actions(a, seed, actions), play_actions(b, seed, actions)


@pytest.mark.parametrize(
    ("name", "action"),
    [("HiddenNumberEnv", "\\boxed{1}"), ("HiddenModulusEnv", "\\boxed{mod 123456789}")],
)
def test_running_out_of_a_stated_budget_terminates_with_the_progress_earned(
    split: Suite, unsplit: Suite, name: str, action: str
) -> None:
    budget = split.env(name).entry.max_turns
    assert budget is not None
    first = split.env(name)
    with first.remote() as env:
        assert f"{budget} " in env.reset(first.entry.eval_seeds[0])[0]  # the task states it
    new, old = _play_both(split, unsplit, name, [action] * budget)
    assert len(new.steps) == budget
    assert new.terminated and not new.truncated and not new.capped and not new.solved
    assert 0 < new.final_reward < 1
    assert old.truncated and not old.terminated  # 1.0.0: the same play, truncated
    assert new.observations == old.observations and new.rewards == old.rewards


def test_a_tool_env_whose_task_states_no_budget_still_truncates(
    split: Suite, unsplit: Suite
) -> None:
    name, call = "BillPaymentEnv", '{"name": "list_bills", "arguments": {}}'
    budget = split.env(name).entry.max_turns
    assert budget is not None
    new, old = _play_both(split, unsplit, name, [call] * budget)
    assert str(budget) not in new.observations[0]
    assert new.truncated and not new.terminated and len(new.steps) == budget
    assert (old.truncated, old.observations, old.rewards) == (True, new.observations, new.rewards)


def _random_play(env: SuiteEnv, seed: int) -> list[tuple[str, float, bool, bool]]:
    with env.remote() as remote:
        agent = RandomAgent(agent_seed(seed), remote.spec.tools)
        episode = EnvEpisode(remote)
        agent.begin(episode.reset(seed))
        while not episode.over:
            episode.step(agent.act())
    return [(s.observation, s.reward, s.terminated, s.truncated) for s in episode.steps]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(34))
def test_random_agent_plays_1_1_0_as_1_0_0_up_to_the_budget_flag(
    split: Suite, unsplit: Suite, index: int
) -> None:
    new_env, old_env = split.envs[index], unsplit.envs[index]
    for seed in new_env.entry.eval_seeds[:3]:
        new, old = _random_play(new_env, seed), _random_play(old_env, seed)
        assert [s[:2] for s in new] == [s[:2] for s in old]
        assert [s[2:] for s in new[:-1]] == [s[2:] for s in old[:-1]]
        if old[-1][2:] == (False, True) and new[-1][2:] == (True, False):
            assert new_env.entry.class_name not in UNSTATED_BUDGET and new[-1][1] < 1.0
        else:
            assert new[-1][2:] == old[-1][2:]
