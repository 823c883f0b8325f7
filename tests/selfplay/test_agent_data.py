"""Warm-start agent data: honest teachers, real sandboxed episodes, train seeds only.

Everything runs against the seed suite's real envs in the sandbox; the only stand-ins are a
`RemoteEnv` that fails on `solution()` / `state()` (to prove scripted teachers never ask)
and manifest entries edited to hold adversarial eval seeds or a `heldout` split.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from spade.envs.remote import RemoteEnv
from spade.rollout.agent_prompt import action_from_reply, first_tool_call, system_prompt
from spade.sandbox import SandboxConfig
from spade.selfplay.warmup import teachers as teachers_module
from spade.selfplay.warmup.agent_data import (
    AgentDataError,
    AgentEpisode,
    action_of,
    build_agent_data,
    check_trainable,
    play_episode,
    read_jsonl,
    summary,
    training_seeds,
    write_jsonl,
)
from spade.selfplay.warmup.teachers import (
    EXPLORE,
    TEACHERS,
    Call,
    History,
    Say,
    TeacherError,
    _lights_presses,
    _sum_of_products,
    policy_of,
    teacher_for,
)
from spade.suites.manifest import EnvEntry
from spade.suites.suite import Suite, SuiteEnv, load_suite

ROOT = Path(__file__).resolve().parents[2] / "envs_snapshots" / "spade-seed"
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


class _NoPeeking(RemoteEnv):
    """A real sandboxed env that fails the episode if anyone asks for privileged state."""

    def solution(self) -> list[str]:
        raise AssertionError("a scripted or explore teacher called solution()")

    def state(self) -> dict[str, Any]:
        raise AssertionError("a teacher called state()")


@dataclasses.dataclass(frozen=True)
class _GuardedEnv(SuiteEnv):
    def remote(self, config: SandboxConfig | None = None) -> RemoteEnv:
        return _NoPeeking(self.source(), Path(self.entry.file).name, config)


@dataclasses.dataclass(frozen=True)
class _SplitEntry(EnvEntry):
    """A manifest entry with a `split`, whether or not this spade's EnvEntry has one."""

    split: str | None = None


def _with_entry(env: SuiteEnv, **changes: Any) -> SuiteEnv:
    fields = {f.name: getattr(env.entry, f.name) for f in dataclasses.fields(env.entry)}
    return SuiteEnv(env.suite_path, _SplitEntry(**{**fields, **changes}))


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(ROOT / "1.0.0")


@pytest.fixture(scope="module")
def one_each(suite: Suite) -> list[AgentEpisode]:
    """One episode of every seed env; envs without a `solution` teacher run guarded."""
    envs = [
        env if teacher_for(env.entry.class_name).kind == "solution" else _GuardedEnv(*_parts(env))
        for env in suite
    ]
    return build_agent_data(envs, 1, random.Random(0))


def _parts(env: SuiteEnv) -> tuple[Path, EnvEntry]:
    return env.suite_path, env.entry


# -- teachers ----------------------------------------------------------------------------------
def test_every_seed_env_has_a_teacher_and_most_hidden_ones_are_scripted(suite: Suite) -> None:
    classes = {env.entry.class_name for env in suite}
    assert set(TEACHERS) == classes
    kinds = [teacher_for(name).kind for name in classes]
    assert set(kinds) <= {"solution", "scripted"}
    assert kinds.count("scripted") > kinds.count("solution")
    assert teacher_for("SomeNewEnv") is EXPLORE


def test_the_docstring_table_is_the_registry() -> None:
    doc = teachers_module.__doc__ or ""
    rows = re.findall(r"^\| (\w+Env) \| (\S+) \| (.+) \|$", doc, re.MULTILINE)
    assert {env: (name, why) for env, name, why in rows} == {
        env: (t.name, t.why) for env, t in TEACHERS.items()
    }


def test_scripted_teachers_are_functions_of_the_observations_only() -> None:
    for teacher in TEACHERS.values():
        if teacher.script is not None:
            code = teacher.script.__code__
            assert code.co_argcount == 1, teacher.name  # the first observation, nothing else
            assert not {"solution", "state", "_rng"} & set(code.co_names), teacher.name
            assert teacher.name == f"scripted:{teacher.script.__name__}"


def test_scripted_and_explore_teachers_never_ask_the_env_for_privileged_state(
    one_each: list[AgentEpisode], suite: Suite
) -> None:
    # `one_each` ran every scripted env on `_NoPeeking`: reaching here means no call was made.
    scripted = {e.env_id for e in one_each if e.teacher.startswith("scripted:")}
    assert len(scripted) == sum(t.kind == "scripted" for t in TEACHERS.values())
    guarded = _GuardedEnv(*_parts(suite.env("HiddenNumberEnv")))
    with guarded.remote() as remote:
        explored = play_episode(guarded, remote, EXPLORE, 5)
        with pytest.raises(AssertionError, match="solution"):
            play_episode(guarded, remote, teacher_for("BalanceReactionEnv"), 5)
    assert explored.teacher == "explore" and len(explored.rewards) >= 1


def test_a_policy_is_replayed_from_the_history_and_must_repeat_itself() -> None:
    policy = policy_of(teachers_module.hidden_number)
    first = "I am thinking of an integer between 1 and 100. You have 10 guesses."
    assert policy(History((first,))) == Say("50", "It is in 1-100, so I guess the middle.")
    history = History((first,)).then(Say("50"), "50 is too low.")
    with pytest.raises(TeacherError, match="replay"):
        policy(history)  # the recorded move lacks the reason the script gives
    history = History((first,)).then(policy(History((first,))), "50 is too low.")
    assert policy(history).command == "75"


def test_minimal_sum_of_products_is_equivalent_and_small() -> None:
    rng = random.Random(3)
    names = ["a", "b", "c", "d"]
    for _ in range(200):
        ones = sorted(rng.sample(range(16), rng.randint(1, 15)))
        formula = _sum_of_products(ones, names)
        python = formula.replace("~", " not ").replace("&", " and ").replace("|", " or ")
        for row, bits in enumerate(itertools.product((0, 1), repeat=4)):
            value = eval(python, {}, dict(zip(names, map(bool, bits), strict=True)))  # noqa: S307
            assert bool(value) == (row in ones), (ones, formula)
        assert formula.count("|") + 1 <= len(ones)


def test_lights_out_presses_clear_the_board_in_no_more_presses_than_the_scramble() -> None:
    rng = random.Random(4)
    for size in (4, 5):
        cells = [(r, c) for r in range(size) for c in range(size)]
        for _ in range(30):
            scramble = rng.sample(cells, rng.randint(1, 8))
            lit: set[tuple[int, int]] = set()
            for r, c in scramble:
                around = [(r, c), (r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)]
                lit ^= {cell for cell in around if cell in cells}
            presses = _lights_presses(lit, size)
            for r, c in presses:
                around = [(r, c), (r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)]
                lit ^= {cell for cell in around if cell in cells}
            assert not lit and len(presses) <= len(scramble)


# -- replies -----------------------------------------------------------------------------------
def test_a_move_becomes_one_reply_whose_action_is_exactly_the_move() -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "finish", "description": "", "parameters": {"type": "object"}},
        }
    ]
    reply, action = action_of(Say("25", "Lower than 50, so 25."), None)
    assert reply == action == "Lower than 50, so 25. \\boxed{25}"
    reply, action = action_of(Call("finish", {}), tools)
    assert reply == action == '{"name": "finish", "arguments": {}}'
    with pytest.raises(TeacherError):
        action_of(Say("a} \\boxed{b"), None)  # a second box would change the command
    with pytest.raises(TeacherError):
        action_of(Say("25", "I like \\boxed{50}."), None)
    with pytest.raises(TeacherError):
        action_of(Call("finish", {}), None)  # a tool call in a text env


@dataclasses.dataclass(frozen=True)
class _Replay:
    episode: AgentEpisode
    tools: list[dict[str, Any]] | None
    first_observation: str
    actions: list[str]
    rewards: list[float]


@pytest.fixture(scope="module")
def replayed(one_each: list[AgentEpisode], suite: Suite) -> list[_Replay]:
    """Every recorded episode played again from its replies alone, as the RL driver would."""
    replays = []
    for episode in one_each:
        with suite.env(episode.env_id).remote() as remote:
            first, _ = remote.reset(episode.seed)
            tools = remote.spec.tools
            actions = [action_from_reply(reply, tools) for reply in episode.replies]
            rewards = [remote.step(action).reward for action in actions]
        replays.append(_Replay(episode, tools, first, actions, rewards))
    return replays


def test_every_reply_round_trips_and_replaying_the_replies_reproduces_the_episode(
    replayed: list[_Replay],
) -> None:
    for replay in replayed:
        for reply, action in zip(replay.episode.replies, replay.actions, strict=True):
            assert action == reply
            if replay.tools:
                assert first_tool_call(reply) == json.loads(reply)
            else:
                assert len(_BOXED.findall(reply)) == 1
        assert replay.rewards == replay.episode.rewards, replay.episode.env_id


def test_replies_fit_the_agents_reply_budget(one_each: list[AgentEpisode]) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from spade.models import builtin_model_dir

    tokenizer = tokenizers.Tokenizer.from_file(
        str(builtin_model_dir("smollm2-135m") / "tokenizer.json")
    )
    for episode in one_each:
        is_tool = episode.kind == "tool_use"
        for reply in episode.replies:
            length = len(tokenizer.encode(reply).ids)
            assert length <= (64 if is_tool else 40), (episode.env_id, length, reply)


def test_messages_are_the_conversation_the_rl_agent_sees(replayed: list[_Replay]) -> None:
    for replay in replayed:
        episode = replay.episode
        roles = [m["role"] for m in episode.messages]
        prompt = system_prompt(replay.tools, None)
        assert episode.messages[0] == {"role": "system", "content": prompt}
        assert episode.messages[1] == {"role": "user", "content": replay.first_observation}
        assert roles[2:] == ["assistant", "user"] * (len(episode.rewards) - 1) + ["assistant"]
        assert len(episode.replies) == len(episode.rewards)


# -- seeds and splits --------------------------------------------------------------------------
@pytest.mark.parametrize("case", range(60))
def test_training_seeds_never_return_an_eval_seed(suite: Suite, case: int) -> None:
    sizes = random.Random(-case)
    # Adversarial manifests: the eval seeds are exactly what the rng is about to draw (all
    # of them, or every other one), plus the env's real ones.
    probe = random.Random(case)
    upcoming = [probe.randrange(1 << 30) for _ in range(sizes.randint(1, 40))]
    if case % 2:
        upcoming = upcoming[::2]
    env = suite.envs[case % len(suite)]
    avoided = [*env.entry.eval_seeds, *upcoming]
    env = _with_entry(env, eval_seeds=avoided)
    count = sizes.randint(1, 50)
    seeds = training_seeds(env, count, random.Random(case))
    assert len(seeds) == len(set(seeds)) == count
    assert not set(seeds) & set(avoided)


def test_built_episodes_use_training_seeds_only(one_each: list[AgentEpisode], suite: Suite) -> None:
    evals = {env.id: set(env.entry.eval_seeds) for env in suite}
    assert all(e.seed not in evals[e.env_id] for e in one_each)


def test_a_heldout_env_is_refused_before_anything_is_played(suite: Suite) -> None:
    heldout = _with_entry(suite.env("HiddenNumberEnv"), split="heldout")
    with pytest.raises(ValueError, match="held-out"):
        check_trainable(heldout)

    @dataclasses.dataclass(frozen=True)
    class _Untouchable(SuiteEnv):
        def remote(self, config: SandboxConfig | None = None) -> RemoteEnv:
            raise AssertionError("an env was played before the split check")

    train = _Untouchable(*_parts(_with_entry(suite.env("CodeBreakerEnv"), split="train")))
    with pytest.raises(ValueError, match="HiddenNumberEnv"):
        build_agent_data([train, heldout], 1, random.Random(0))


def test_the_split_suites_train_envs_build_and_its_heldout_envs_are_refused() -> None:
    if not (ROOT / "1.1.0").is_dir():
        pytest.skip("spade-seed@1.1.0 is not in this checkout")
    split = load_suite(ROOT / "1.1.0")
    train, heldout = split.envs_in("train"), split.envs_in("heldout")
    for env in heldout:
        with pytest.raises(ValueError):
            check_trainable(env)
    episodes = build_agent_data(train, 1, random.Random(1))
    assert {e.env_id for e in episodes} == {env.id for env in train}
    assert all(e.terminated and not e.capped for e in episodes)


# -- the builder -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["HiddenNumberEnv", "CodeBreakerEnv", "FogMazeEnv", "MinesweeperEnv", "BillPaymentEnv"]
)
def test_episodes_end_and_their_rewards_are_reported(suite: Suite, name: str) -> None:
    episodes = build_agent_data([suite.env(name)], 3, random.Random(2))
    assert len(episodes) == 3
    for episode in episodes:
        assert episode.terminated and not (episode.truncated or episode.capped)
        assert episode.final_reward == episode.rewards[-1]
        assert episode.solved == (episode.final_reward >= 1.0)
    mean = sum(e.final_reward for e in episodes) / 3
    row = next(line for line in summary(episodes).splitlines() if name in line)
    assert f"{mean:.2f}" in row and teacher_for(name).name in row


def test_the_build_is_deterministic_and_its_jsonl_reads_back(suite: Suite, tmp_path: Path) -> None:
    envs = [suite.env(n) for n in ("HighLowEnv", "BattleshipEnv", "ShoppingBudgetEnv")]
    first = build_agent_data(envs, 2, random.Random(11))
    again = build_agent_data(envs, 2, random.Random(11))
    assert [e.to_json() for e in first] == [e.to_json() for e in again]
    path = tmp_path / "run" / "agent.jsonl"
    write_jsonl(path, first)
    assert read_jsonl(path) == first
    assert len(path.read_text().splitlines()) == len(first)
    assert [p.name for p in path.parent.iterdir()] == ["agent.jsonl"]  # no temporary left


def test_a_broken_teacher_names_the_env_and_seed(suite: Suite) -> None:
    env = suite.env("HiddenNumberEnv")
    wrong = TEACHERS["CodeBreakerEnv"]  # it looks for colours and pegs, not a range
    with env.remote() as remote, pytest.raises(TeacherError):
        play_episode(env, remote, wrong, 3)
    renamed = _with_entry(env, class_name="CodeBreakerEnv")
    with pytest.raises(AgentDataError, match=r"HiddenNumberEnv-v1 seed \d+ \(scripted:code"):
        build_agent_data([renamed], 1, random.Random(0))


def test_teacher_play_at_levels_takes_them_in_turn_and_leaves_out_what_it_cannot_solve() -> None:
    levelled = load_suite("spade-seed@1.2.0").envs_in("train")
    envs = [e for e in levelled if e.entry.class_name in ("HiddenNumberEnv", "HighLowEnv")]
    skipped: list[str] = []
    episodes = build_agent_data(envs, 4, random.Random(3), levels=[0, 1], skipped=skipped)
    numbers = [e for e in episodes if e.env_id.endswith("HiddenNumberEnv-v1")]
    assert [e.difficulty for e in numbers] == [0, 1, 0, 1] and all(e.solved for e in numbers)
    assert all("4 guesses" in e.messages[1]["content"] for e in numbers if e.difficulty == 0)
    # Below the top level, what a scripted teacher does not solve (HighLow is a game of
    # chance: it loses some deals) is listed and left out, never taught.
    games = [e for e in episodes if e.env_id.endswith("HighLowEnv-v1")]
    assert all(e.solved for e in games)
    assert len(games) + len(skipped) == 4 and skipped
    assert all(s.startswith("spade-seed/HighLowEnv-v1@") for s in skipped)


@pytest.fixture(scope="module")
def levelled() -> Suite:
    return load_suite("spade-seed@1.2.0")


def _play_at(
    suite: Suite, name: str, levels: list[int], count: int
) -> dict[int, list[AgentEpisode]]:
    """`count` training-seed episodes of the env's teacher at each level, on `_NoPeeking`."""
    env = next(e for e in suite.envs_in("train") if e.entry.class_name == name)
    guarded = _GuardedEnv(*_parts(env))
    teacher = teacher_for(name)
    seeds = training_seeds(env, count, random.Random(0))
    with guarded.remote() as remote:
        return {
            level: [play_episode(guarded, remote, teacher, seed, level) for seed in seeds]
            for level in levels
        }


_READS = {"list_bills", "get_balance", "list_reservations", "list_tables", "get_party"}
_READS |= {"list_devices", "read_sensors", "read_range", "list_orders", "get_order", "check_stock"}


@pytest.mark.parametrize(
    "name",
    [
        "BillPaymentEnv",
        "RestaurantSeatingEnv",
        "SmartHomeEnv",
        "SpreadsheetAuditEnv",
        "WarehouseOrdersEnv",
    ],
)
def test_teachers_use_what_level_0_shows_and_still_solve_the_top_level(
    levelled: Suite, name: str
) -> None:
    played = _play_at(levelled, name, [0, 4], 3)
    for level, episodes in played.items():
        assert all(e.solved for e in episodes), (level, [e.final_reward for e in episodes])
    # Level 0 shows the state in its first observation and allows few calls: re-reading it
    # ran the teachers out of calls before `finish`.
    for episode in played[0]:
        assert not _READS & {json.loads(reply)["name"] for reply in episode.replies}


def test_high_low_reads_level_0s_single_skip_and_plays_its_games_out(levelled: Suite) -> None:
    played = _play_at(levelled, "HighLowEnv", [0, 4], 6)
    for episodes in played.values():
        assert all(e.terminated for e in episodes)  # won or lost, none cut short
        assert any(e.solved for e in episodes)  # a game of chance: even the best play loses some
    # Level 0 says "1 skip available" (the top level "3 skips"): the teacher reads it and uses it.
    assert any(reply.endswith("\\boxed{skip}") for e in played[0] for reply in e.replies)


def test_procedural_episodes_answer_right_at_once_on_training_seeds() -> None:
    from spade.procedural import POOL_TASKS
    from spade.selfplay.warmup.agent_data import build_procedural_data
    from spade.suites.seeds import TRAINING_SEED_SPAN

    episodes = build_procedural_data(POOL_TASKS, 3, [0, 1, 2], 3, random.Random(0))
    assert len(episodes) == 3 * len(POOL_TASKS)
    assert all(e.solved and e.seed < TRAINING_SEED_SPAN for e in episodes)
    islands = [e.difficulty for e in episodes if e.env_id == "rg:largest_island"]
    assert islands == [0, 1, 0]  # the task has two levels here
    first = episodes[0]
    assert [m["role"] for m in first.messages] == ["system", "user", "assistant"]
    assert first.messages[2]["content"].startswith("\\boxed{")
    assert AgentEpisode.from_json(first.to_json()) == first
