"""`runner: acebench`: ACEBench's agent category (English), multi_step and multi_turn.

Episodes advance in lockstep: each round, every active episode's next agent request goes to
the responder in one call, and every pending simulated-user request to the user model in
one call. Per sample: `end_state` (primary; 1 when every compared class's final state equals
the ground truth) and `process` (milestones matched in order, best alternative), also split
by subset as `end_state[multi_step]` etc.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from spade.evals.acebench.data import SUBSETS, AceBenchDataError, Entry, Subset, load_entries
from spade.evals.acebench.episode import (
    AnyEpisode,
    MultiTurnEpisode,
    new_episode,
    replay_episode,
)
from spade.evals.acebench.scoring import end_state_diff, process_accuracy
from spade.evals.acebench.user import UserSimulator
from spade.evals.benchmark import check_known_ids
from spade.evals.declarations import Declaration, DeclarationError
from spade.evals.responders import PredictionsResponder
from spade.evals.samples import (
    GenerationSettings,
    GenRequest,
    ProgressCallback,
    Responder,
    SampleResult,
)


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
        user_settings = GenerationSettings(max_gen_toks=self.options.user_max_gen_toks)
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
        chosen = [entries[i] for i in ids]
        if isinstance(respond, PredictionsResponder):
            return [self._replayed(e, respond, progress) for e in chosen]
        episodes = self._play(chosen, respond, progress)
        return [self._result(episode) for episode in episodes]

    def _play(
        self, entries: list[Entry], respond: Responder, progress: ProgressCallback | None
    ) -> list[AnyEpisode]:
        episodes = [new_episode(e, self.options.max_dialog_turns) for e in entries]
        settings = self.declaration.generation.settings()
        name = self.declaration.name
        active = list(episodes)
        while active:
            agents = [e for e in active if e.needs() == "agent"]
            users = [e for e in active if isinstance(e, MultiTurnEpisode) and e.needs() == "user"]
            if agents:
                requests = [
                    GenRequest(name, e.entry.id, tuple(e.agent_messages()), settings)
                    for e in agents
                ]
                for episode, texts in zip(agents, respond(requests), strict=True):
                    episode.feed_agent(texts[0])
            if users:
                requests = [self.user.request(name, e.entry.id, e.user_messages()) for e in users]
                for user_episode, text in zip(users, self.user(requests), strict=True):
                    user_episode.feed_user(text)
            finished = [e for e in active if e.done]
            active = [e for e in active if not e.done]
            if progress and finished:
                progress(len(finished))
        return episodes

    def _replayed(
        self, entry: Entry, respond: PredictionsResponder, progress: ProgressCallback | None
    ) -> SampleResult:
        saved = respond.saved(self.declaration.name, entry.id)
        result = self._result(replay_episode(entry, saved, self.options.max_dialog_turns))
        result.output = saved
        if progress:
            progress(1)
        return result

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
