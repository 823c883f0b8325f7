"""Token-in/token-out: a real multi-turn rollout trains on exactly the ids it sampled.

A tiny real Llama (random weights, SmolLM2's tokenizer and template) plays a real seed env
in the sandbox through the lockstep player and `EnvDriver` in token-in mode. Every trained
sequence must be the sampler's own ids: each turn's completion exactly as generated (a reply
cut off at the token limit with no end-of-turn appended), each later prompt an extension of
the earlier prompt and reply; and the learner's logprobs of those tokens before the update
must equal the sampler's (the rollout-vs-learner mismatch), within 1e-4 on the CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from spade.envs.remote import RemoteEnv
from spade.models.chat_template import ChatTokens
from spade.models.policy import Completion, Prompt, SamplingParams, TokenPrompt, ToolSchema
from spade.rl import Learner, UpdateConfig
from spade.rollout import EnvDriver, EpisodeSpec, PolicyResponder, play
from spade.selfplay.agent_step import episode_samples

ROOT = Path(__file__).resolve().parents[2]
ENV = (ROOT / "envs_snapshots/spade-seed/1.0.0/envs/hidden_number.py").read_text()


class Recording:
    """The learner's live policy, keeping every prompt it was given and what it sampled."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[Prompt, Completion]] = []

    def generate(
        self,
        prompts: Sequence[Prompt],
        sampling: SamplingParams,
        tools: Sequence[list[ToolSchema] | None] | None = None,
    ) -> list[Completion]:
        completions = self.inner.generate(prompts, sampling, tools)
        self.calls += list(zip(prompts, completions, strict=True))
        return completions

    def describe(self) -> Any:
        return self.inner.describe()


def play_token_in(learner: Learner, max_new_tokens: int) -> tuple[list[EnvDriver], Recording]:
    recording = Recording(learner.policy())
    sampling = SamplingParams(max_new_tokens=max_new_tokens, temperature=1.0, seed=7,
                              logprobs=True)  # fmt: skip
    chat = ChatTokens(learner.tokenizer)
    make = partial(RemoteEnv, ENV)
    drivers = [EnvDriver(EpisodeSpec(f"hidden/{seed}", make, seed, turn_cap=3), "agent",
                         sampling, chat, max_context=2048) for seed in (1, 2)]  # fmt: skip
    play(drivers, PolicyResponder(recording, "tiny", None, 8), phase="agent")
    return drivers, recording


def test_each_turn_trains_on_the_sampled_ids_and_later_turns_extend_earlier_ones(
    tiny_model_dir: Path,
) -> None:
    learner = Learner(tiny_model_dir, UpdateConfig(lr=1e-3))
    drivers, recording = play_token_in(learner, max_new_tokens=6)
    sampled = {(tuple(c.prompt_token_ids or ()), tuple(c.token_ids or ()), tuple(c.logprobs or ()))
               for _, c in recording.calls}  # fmt: skip
    eot = ChatTokens(learner.tokenizer).end_of_turn_id
    for driver in drivers:
        episode = driver.episode
        assert episode.error is None and len(episode.turns) == 3  # the cap ends it, truncated
        assert episode.truncated and not episode.terminated
        for k, turn in enumerate(episode.turns):
            # What the backend was fed, what it sampled and their logprobs, all exactly.
            assert (turn.prompt_ids, turn.completion_ids, turn.logprobs) in sampled
            if turn.finish_reason == "length":  # cut off: nothing appended
                assert len(turn.completion_ids) == 6 and turn.completion_ids[-1] != eot
            if k:
                before = episode.turns[k - 1]
                head = (*before.prompt_ids, *before.completion_ids)
                assert turn.prompt_ids[: len(head)] == head
        # Turns after the first were sent token-in, as ids, never re-rendered text.
        later = {t.prompt_ids for t in episode.turns[1:]}
        assert later <= {p.ids for p, _ in recording.calls if isinstance(p, TokenPrompt)}
        # The whole episode is one sample: its sequence is the last prompt and reply, and
        # exactly the sampled tokens are trained, with the sampler's logprobs beside them.
        [sample] = episode_samples(episode, 1.0, masked=False)
        last = episode.turns[-1]
        assert (*sample.prompt_ids, *sample.completion_ids) == (
            *last.prompt_ids,
            *last.completion_ids,
        )
        assert sample.prompt_ids == episode.turns[0].prompt_ids
        mask, logprobs = sample.completion_mask or (), sample.sampled_logprobs or ()
        trained = [t for t, m in zip(sample.completion_ids, mask, strict=True) if m]
        assert trained == [t for turn in episode.turns for t in turn.completion_ids]
        assert [lp for lp, m in zip(logprobs, mask, strict=True) if m] == [
            lp for turn in episode.turns for lp in turn.logprobs or ()
        ]
    assert any(t.finish_reason == "length" for d in drivers for t in d.episode.turns)


def test_learner_logprobs_before_the_update_equal_the_samplers(tiny_model_dir: Path) -> None:
    learner = Learner(tiny_model_dir, UpdateConfig(lr=1e-3, micro_batch_size=2))
    drivers, _ = play_token_in(learner, max_new_tokens=8)
    samples = [s for d in drivers for s in episode_samples(d.episode, 1.0, masked=False)]
    metrics = learner.update(samples).as_dict()
    assert metrics["mismatch/tokens"] == sum(sum(s.completion_mask or ()) for s in samples)
    assert metrics["mismatch/logprob_abs_diff_max"] < 1e-4
    assert abs(metrics["mismatch/ratio_max"] - 1) < 1e-4
    assert metrics["optimizer_steps"] == 1
    # With no signal at all there is no step, and the mismatch is still measured (a probe).
    idle = learner.update(episode_samples(drivers[0].episode, 0.0, masked=True)).as_dict()
    assert idle["optimizer_steps"] == 0 and idle["mismatch/tokens"] > 0
