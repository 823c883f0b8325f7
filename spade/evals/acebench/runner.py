"""`runner: acebench`: ACEBench's agent category (English), multi_step and multi_turn.

Episodes advance in lockstep: each round, every active episode's next agent request goes to
the responder in one call, and every pending simulated-user request to the user model in
one call. Per sample: `end_state` (primary; 1 when every compared class's final state equals
the ground truth) and `process` (milestones matched in order, best alternative), also split
by subset as `end_state[multi_step]` etc.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from spade.evals.acebench.data import SUBSETS, AceBenchDataError, Entry, Subset, load_entries
from spade.evals.acebench.episode import AnyEpisode, MultiTurnEpisode, new_episode, replay_episode
from spade.evals.acebench.scoring import end_state_diff, process_accuracy
from spade.evals.acebench.user import UserSimulator
from spade.evals.benchmark import check_known_ids
from spade.evals.declarations import Declaration, DeclarationError
from spade.evals.samples import ProgressCallback, SampleResult
from spade.models.policy import Completion, SamplingParams
from spade.rollout import GenRequest, Responder, play

USER = "user"
"""The party that answers the simulated user's turns (`GenRequest.to`)."""


class AceBenchOptions(BaseModel):
    """The `options:` of a `runner: acebench` declaration."""

    model_config = ConfigDict(extra="forbid")

    user_model: str = Field(
        "smollm2-135m",
        description="checkpoint spec of the simulated user (multi_turn); scores compare only "
        "between runs with the same user",
    )
    user_max_gen_toks: int = Field(256, ge=1, description="longest simulated-user message")
    user_batch_size: int = Field(8, ge=1, description="user-model generation batch size")
    max_dialog_turns: int = Field(
        40, ge=2, description="messages after the first one (agent, user, execution), as upstream"
    )


class AceBenchBenchmark:
    """A declared ACEBench agent benchmark (`runner: acebench`)."""

    def __init__(self, declaration: Declaration, user_responder: Responder | None = None) -> None:
        self.declaration = declaration
        self.options = declaration.typed_options(AceBenchOptions)
        user_settings = SamplingParams(max_new_tokens=self.options.user_max_gen_toks, seed=0)
        self.user = UserSimulator(
            self.options.user_model, user_settings, user_responder, self.options.user_batch_size
        )
        self._entries: dict[str, Entry] | None = None

    # -- data ------------------------------------------------------------------------------
    def entries(self, data_dir: Path | None) -> dict[str, Entry]:
        """Every entry by id: multi_step first, then multi_turn, each in file order."""
        if self._entries is None:
            if data_dir is None:
                raise DeclarationError(
                    f"{self.declaration.name}: ACEBench is not on the hub; pass --data-dir with "
                    f"{', '.join(d.path for d in self.declaration.data)}"
                )
            self.declaration.verify_data(data_dir)
            loaded = [e for subset in SUBSETS for e in self._load(data_dir, subset)]
            self._entries = {e.id: e for e in loaded}
        return self._entries

    def _load(self, data_dir: Path, subset: Subset) -> list[Entry]:
        paths = [d.path for d in self.declaration.data if f"agent_{subset}." in d.path]
        questions = [p for p in paths if "possible_answer" not in p]
        answers = [p for p in paths if "possible_answer" in p]
        if len(questions) != 1 or len(answers) != 1:
            raise DeclarationError(
                f"{self.declaration.name}: declare one question file and one "
                f"possible_answer file for agent_{subset}"
            )
        try:
            return load_entries(data_dir / questions[0], data_dir / answers[0], subset)
        except AceBenchDataError as exc:
            raise DeclarationError(f"{self.declaration.name}: {exc}") from None

    def sample_ids(self, data_dir: Path | None) -> list[str]:
        return list(self.entries(data_dir))

    # -- run -------------------------------------------------------------------------------
    def run(
        self,
        ids: list[str],
        respond: Responder,
        data_dir: Path | None,
        progress: ProgressCallback | None = None,
    ) -> list[SampleResult]:
        entries = self.entries(data_dir)
        check_known_ids(self.declaration.name, ids, entries)
        name = self.declaration.name
        sampling = self.declaration.generation.sampling()
        drivers = [
            AceBenchDriver(entries[i], self.options.max_dialog_turns, name, sampling, self.user)
            for i in ids
        ]
        if any(entries[i].subset == "multi_turn" for i in ids):
            self.user.share(respond)
        play(
            drivers,
            respond,
            phase=name,
            others={USER: self.user},
            on_done=(lambda _: progress(1)) if progress else None,
        )
        results = []
        for driver in drivers:
            result = self._result(driver.episode)
            if driver.saved is not None:
                result.output = driver.saved
            results.append(result)
        return results

    def _result(self, episode: AnyEpisode) -> SampleResult:
        entry = episode.entry
        diff = end_state_diff(episode.scenario.state(), entry.ground_truth)
        end_state = float(not diff)
        process = 1.0 if end_state else process_accuracy(episode.process, entry.milestones)
        extra: dict[str, Any] = {
            "subset": entry.subset,
            "turns": episode.index,
            "finished": episode.finished,
            "malformed": episode.malformed,
            "errors": episode.errors,
            "end_state_diff": diff,
            "process_calls": episode.process,
        }
        if entry.unchecked:
            extra["unchecked_classes"] = entry.unchecked
        if entry.subset == "multi_turn":
            extra["user_model"] = self.user.describe()
        return SampleResult(
            benchmark=self.declaration.name,
            sample_id=entry.id,
            prompt={
                "agent_system": episode.agent_messages()[0]["content"],
                "question": entry.question,
            },
            output=episode.output(),
            answer=episode.executed,
            target={"end_state": entry.ground_truth, "mile_stone": entry.milestones},
            score=end_state,
            metrics={
                "end_state": end_state,
                "process": process,
                f"end_state[{entry.subset}]": end_state,
                f"process[{entry.subset}]": process,
            },
            parsed=not episode.malformed,
            extra=extra,
        )


class AceBenchDriver:
    """One ACEBench dialogue as a `spade.rollout.Driver`: agent turns go to the policy,
    simulated-user turns to the user model (`to=USER`)."""

    def __init__(
        self,
        entry: Entry,
        max_turns: int,
        phase: str,
        sampling: SamplingParams,
        user: UserSimulator,
    ) -> None:
        self.key = entry.id
        self.episode = new_episode(entry, max_turns)
        self.phase = phase
        self.sampling = sampling
        self.user = user
        self.saved: Any = None
        """The saved output, when replayed (it is the sample's output as given)."""
        self._asked: str | None = None

    def start(self) -> None:
        pass

    def next_request(self) -> GenRequest | None:
        episode = self.episode
        self._asked = None if episode.done else episode.needs()
        if self._asked == "agent":
            return GenRequest(self.phase, self.key, tuple(episode.agent_messages()), self.sampling)
        if self._asked == "user" and isinstance(episode, MultiTurnEpisode):
            return replace(
                self.user.request(self.phase, self.key, episode.user_messages()), to=USER
            )
        return None

    def feed(self, completion: Completion) -> None:
        if self._asked == "user" and isinstance(self.episode, MultiTurnEpisode):
            self.episode.feed_user(completion.text)
        else:
            self.episode.feed_agent(completion.text)

    def replay(self, saved: Any) -> None:
        self.saved = saved
        replay_episode(self.episode, saved)

    def close(self) -> None:
        pass
