"""Priorities: an episode's turns ask before single-turn requests where the engine schedules
by priority, the cache ignores them, and a policy that schedules nothing never sees them."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from spade.envs.remote import RemoteEnv
from spade.models.policy import Completion, Prompt, SamplingParams, ToolSchema
from spade.rollout import EnvDriver, EpisodeSpec, GenRequest, PolicyResponder, play
from spade.rollout.cache import request_key
from spade.rollout.player import TURN_PRIORITY

ROOT = Path(__file__).resolve().parents[2]
ENV = (ROOT / "envs_snapshots/spade-seed/1.0.0/envs/hidden_number.py").read_text()
GREEDY = SamplingParams(max_new_tokens=8)


class Scripted:
    """Answers `\\boxed{50}` to everything and keeps the priorities it was handed."""

    def __init__(self, concurrent_callers: bool) -> None:
        self.concurrent_callers = concurrent_callers
        self.seen: list[list[int] | None] = []

    def generate(
        self,
        prompts: Sequence[Prompt],
        sampling: SamplingParams,
        tools: Sequence[list[ToolSchema] | None] | None = None,
        **kwargs: Any,
    ) -> list[Completion]:
        self.seen.append(kwargs.get("priorities"))
        return [Completion(text="\\boxed{50}", finish_reason="stop", prompt_tokens=1,
                           completion_tokens=1) for _ in prompts]  # fmt: skip

    def describe(self) -> Any:
        raise NotImplementedError


def play_two(policy: Scripted) -> None:
    make = partial(RemoteEnv, ENV)
    drivers = [EnvDriver(EpisodeSpec(f"hidden/{seed}", make, seed, turn_cap=2), "suite", GREEDY)
               for seed in (1, 2)]  # fmt: skip
    play(drivers, PolicyResponder(policy, "scripted", None, 8), phase="suite")


def test_an_episodes_turns_go_first_on_an_engine_that_schedules_callers() -> None:
    policy = Scripted(concurrent_callers=True)
    play_two(policy)
    assert policy.seen == [[TURN_PRIORITY] * 2] * 2 and TURN_PRIORITY < 0
    single = GenRequest("gsm8k", "q1", ({"role": "user", "content": "2+2?"},), GREEDY)
    PolicyResponder(policy, "scripted", None, 8)([single])
    assert policy.seen[-1] is None  # priority 0 everywhere: nothing to pass


def test_a_policy_that_schedules_nothing_never_sees_priorities() -> None:
    policy = Scripted(concurrent_callers=False)
    play_two(policy)
    assert policy.seen == [None, None]


def test_the_same_request_at_another_priority_is_the_same_cached_reply() -> None:
    asked = GenRequest("suite", "e/1", ({"role": "user", "content": "Go."},), GREEDY)
    sooner = GenRequest("suite", "e/1", asked.messages, GREEDY, priority=TURN_PRIORITY)
    assert request_key("m", asked, 0) == request_key("m", sooner, 0)
