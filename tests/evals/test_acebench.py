"""The `acebench` runner on the real ACEBench agent data: every entry's milestone path,
replayed on fresh apps, reaches its ground-truth end state; a wrong path is caught; the
runner scores scripted agents, replays saved predictions, and survives malformed output.

Data comes from $SPADE_DATA_DIR (default ../shared/data); the tests skip without it.
Responders here are plain functions over GenRequests (a scripted agent and user).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from spade.evals.acebench import AceBenchBenchmark
from spade.evals.acebench.calls import CallSyntaxError, parse_calls
from spade.evals.acebench.data import Entry
from spade.evals.acebench.errata import MILESTONE_ERRATA, UNCHECKED
from spade.evals.acebench.prompts import FINISH
from spade.evals.acebench.scenario import Scenario
from spade.evals.acebench.scoring import end_state_diff, process_accuracy
from spade.evals.benchmark import build_benchmark
from spade.evals.declarations import BENCHMARKS_DIR, DeclarationError, load_declaration
from spade.evals.samples import SampleResult
from spade.models import builtin_model_dir
from spade.models.policy import Completion, PolicyInfo
from spade.models.weights import weights_sha256
from spade.rollout import GenRequest, PolicyResponder, Predictions, Responder
from tests.data import DATA_DIR  # noqa: E402
from tests.replies import completion, text_responder

pytestmark = pytest.mark.skipif(
    not (DATA_DIR / "acebench").is_dir(), reason=f"no ACEBench data in {DATA_DIR}"
)
NAME = "acebench_agent"
# The data's milestones leave apostrophes unescaped inside quotes ('Domino's').
_BARE_APOSTROPHE = re.compile(r"(?<=[A-Za-z])'(?=[A-Za-z])")


def benchmark(user: Responder | None = None, **options: object) -> AceBenchBenchmark:
    declaration = load_declaration(BENCHMARKS_DIR / f"{NAME}.yaml")
    if options:
        declaration = declaration.model_copy(update={"options": declaration.options | options})
    return AceBenchBenchmark(declaration, user)


ENTRIES = benchmark().entries(DATA_DIR) if (DATA_DIR / "acebench").is_dir() else {}


def reference_paths(entry: Entry) -> list[list[str]]:
    """The entry's milestone paths with the data fixes applied, one message per milestone."""
    _, fixes = MILESTONE_ERRATA.get(entry.id, ("", ()))
    paths = []
    for path in entry.milestones:
        fixed = []
        for stone in path:
            for old, new in fixes:
                stone = stone.replace(old, new)
            try:
                parse_calls(stone)
            except CallSyntaxError:
                stone = _BARE_APOSTROPHE.sub(r"\\'", stone)
            fixed.append(stone.strip())
        paths.append(fixed)
    return paths


def replay(entry: Entry, messages: Sequence[str]) -> Scenario:
    scenario = Scenario(entry.involved_classes, entry.initial_config, entry.functions)
    for message in messages:
        for call in parse_calls(message):
            outcome = scenario.execute(call)
            assert not outcome.malformed, outcome.error
    return scenario


def scripted_agent(
    scripts: dict[str, list[str]],
) -> Callable[[Sequence[GenRequest]], list[list[str]]]:
    """Answers each sample's agent requests from its script, then FINISH."""
    position = dict.fromkeys(scripts, 0)
    batches: list[int] = []

    @text_responder
    def respond(requests: Sequence[GenRequest]) -> list[list[str]]:
        batches.append(len(requests))
        answers = []
        for request in requests:
            script, step = scripts[request.sample_id], position[request.sample_id]
            position[request.sample_id] += 1
            answers.append([script[step] if step < len(script) else FINISH])
        return answers

    respond.batches = batches  # type: ignore[attr-defined]
    return respond


def run(ids: list[str], respond: Responder, user: Responder | None = None) -> list[SampleResult]:
    return benchmark(user).run(ids, respond, DATA_DIR)


# -- the apps against the data -----------------------------------------------------------------
@pytest.mark.parametrize("entry_id", list(ENTRIES))
def test_every_milestone_path_reaches_the_ground_truth(entry_id: str) -> None:
    entry = ENTRIES[entry_id]
    for path in reference_paths(entry):
        state = replay(entry, path).state()
        assert end_state_diff(state, entry.ground_truth) == []
        assert set(state) == set(entry.ground_truth) | set(entry.unchecked)


def test_all_fifty_entries_and_their_classes_are_compared() -> None:
    assert len(ENTRIES) == 50
    assert sum(e.subset == "multi_step" for e in ENTRIES.values()) == 20
    # Misspelt class names (ReminderAPI, Reminderpi, BaseAPI) are mapped, not dropped.
    assert set(ENTRIES["agent_multi_turn_7"].ground_truth) == {
        "BaseApi",
        "MessageApi",
        "ReminderApi",
    }
    assert {e.id for e in ENTRIES.values() if e.unchecked} == set(UNCHECKED)


def test_a_wrong_path_is_detected() -> None:
    entry = ENTRIES["agent_multi_step_4"]  # delete the latest message (4), then send
    right = reference_paths(entry)[0]
    wrong = [m.replace("message_id=4", "message_id=3") for m in right]
    diff = end_state_diff(replay(entry, wrong).state(), entry.ground_truth)
    assert diff and all(line.startswith("MessageApi.inbox") for line in diff)
    unsent = end_state_diff(replay(entry, right[:-1]).state(), entry.ground_truth)
    assert any("['7']" in line for line in unsent)
    travel = ENTRIES["agent_multi_turn_20"]
    costly = [m.replace("baggage_count=1", "baggage_count=4") for m in reference_paths(travel)[0]]
    assert any(
        "bank_balance" in line or "Travel.users" in line
        for line in end_state_diff(replay(travel, costly).state(), travel.ground_truth)
    )


def test_an_app_that_raises_answers_the_model_with_the_error_text() -> None:
    entry_id = "agent_multi_step_5"  # its path ends with a sent message, which has no time
    script = [*reference_paths(ENTRIES[entry_id])[0], "[get_latest_message_id()]"]
    requests: list[GenRequest] = []
    agent = scripted_agent({entry_id: script})

    def respond(batch: Sequence[GenRequest]) -> list[list[Completion]]:
        requests.extend(batch)
        return agent(batch)

    [result] = run([entry_id], respond)
    error = "get_latest_message_id raised KeyError: 'time'"
    assert result.extra["errors"] == [
        {"index": 7, "text": "get_latest_message_id()", "error": error}
    ]
    assert f"Error during execution: {error}" in requests[-1].messages[1]["content"]
    assert result.score == 1.0 and result.parsed  # a crash is not the model's syntax error


# -- parsing and metrics -------------------------------------------------------------------------
def test_calls_parse_safely() -> None:
    [one] = parse_calls(
        " [add_food_delivery_order(username='Eve', items=[{'product': 'x', 'quantity': 2}])] "
    )
    assert one.args["items"] == [{"product": "x", "quantity": 2}]
    assert [c.name for c in parse_calls("[login_device(), turn_on_wifi()]")] == [
        "login_device",
        "turn_on_wifi",
    ]
    for bad in (
        "finish conversation",
        "[f('positional')]",
        "[f(a=__import__('os'))]",
        "[os.system(a=1)]",
        "[f(a=1+1)]",
        "[]",
        "[f(**k)]",
    ):
        with pytest.raises(CallSyntaxError):
            parse_calls(bad)


def test_process_accuracy_is_upstreams_greedy_ordered_match() -> None:
    path = [["[a()]", "[b()]", "[c()]"]]
    assert process_accuracy(["[a()]", "[x()]", " [b()] ", "[c()]"], path) == 1.0
    assert process_accuracy(["[a()]", "[c()]", "[b()]"], path) == pytest.approx(2 / 3)
    # A milestone not found consumes the rest: later ones are not found either (no LCS).
    assert process_accuracy(["[a()]", "[c()]"], path) == pytest.approx(1 / 3)
    assert process_accuracy(["[c()]"], [["[a()]"], ["[c()]"]]) == 1.0  # best alternative


# -- the runner ---------------------------------------------------------------------------------
def test_reference_agents_score_full_marks_in_lockstep() -> None:
    ids = ["agent_multi_step_0", "agent_multi_step_10", "agent_multi_step_19"]
    respond = scripted_agent({i: reference_paths(ENTRIES[i])[0] for i in ids})
    finished: list[int] = []
    results = benchmark().run(ids, respond, DATA_DIR, finished.append)
    assert [r.score for r in results] == [1.0, 1.0, 1.0]
    assert all(
        r.metrics["process"] == 1.0 and r.metrics["end_state[multi_step]"] == 1.0 for r in results
    )
    assert all(r.parsed and r.extra["finished"] for r in results)
    assert respond.batches[0] == 3 and sum(finished) == 3  # type: ignore[attr-defined]
    assert results[1].output == reference_paths(ENTRIES[ids[1]])[0] + [FINISH]


def test_multi_turn_plays_a_simulated_user_and_records_it() -> None:
    ids = ["agent_multi_turn_0", "agent_multi_turn_22"]
    scripts = {
        i: ["What can I do for you?", *reference_paths(ENTRIES[i])[0], "All done."] for i in ids
    }
    seen: list[GenRequest] = []

    @text_responder
    def user(requests: Sequence[GenRequest]) -> list[list[str]]:
        seen.extend(requests)
        return [
            ["Please help me with my task." if len(r.messages) == 2 else FINISH] for r in requests
        ]

    results = run(ids, scripted_agent(scripts), user)
    assert [r.score for r in results] == [1.0, 1.0]
    assert all(
        r.extra["user_model"] == {"spec": "smollm2-135m", "backend": "given"} for r in results
    )
    assert all(r.extra["finished"] and r.metrics["process[multi_turn]"] == 1.0 for r in results)
    # The user sees its instruction and only the agent's text replies, never tool results.
    assert ENTRIES[ids[0]].question in seen[0].messages[0]["content"]
    assert not any(
        "Error" in m["content"] or "status" in m["content"] for r in seen for m in r.messages[1:]
    )
    roles = [m["role"] for m in results[0].output]
    assert roles[:3] == ["user", "assistant", "user"] and "tool" in roles


class OneEnginePolicy:
    """The checkpoint under test, scripted for one entry: agent turns follow `script`, user
    turns (recognised by the user's system prompt) ask, then finish; reports `sha256` as its
    weights."""

    def __init__(self, sha256: str | None, script: list[str]) -> None:
        self.sha256, self.script, self.user_turns, self.agent_turns = sha256, script, 0, 0

    def generate(self, conversations: Sequence[Any], sampling: Any, tools: Any = None) -> list[Any]:
        replies = []
        for messages in conversations:
            if str(messages[0]["content"]).startswith("You are a user talking with an agent"):
                self.user_turns += 1
                replies.append("Please help me." if len(messages) == 2 else FINISH)
            else:
                turn, self.agent_turns = self.agent_turns, self.agent_turns + 1
                replies.append(self.script[turn] if turn < len(self.script) else FINISH)
        return [completion(text) for text in replies]

    def describe(self) -> PolicyInfo:
        return PolicyInfo("vllm", "smollm2-135m", self.sha256)


def test_the_user_shares_the_checkpoints_engine_only_when_it_has_the_users_weights() -> None:
    entry = "agent_multi_turn_0"
    script = ["What can I do for you?", *reference_paths(ENTRIES[entry])[0], "All done."]
    base = weights_sha256(builtin_model_dir("smollm2-135m"))
    same = OneEnginePolicy(base, script)
    results = run([entry], PolicyResponder(same, "vllm:base"))
    assert [r.score for r in results] == [1.0] and same.user_turns >= 2
    assert results[0].extra["user_model"] == {
        "spec": "smollm2-135m", "backend": "vllm", "model": "smollm2-135m",
        "weights_sha256": base, "endpoint": None, "shared_with_checkpoint": True}  # fmt: skip
    trained = benchmark()
    trained.user.share(PolicyResponder(OneEnginePolicy("0" * 64, script), "vllm:trained"))
    assert trained.user.describe() == {"spec": "smollm2-135m"}  # it will load its own model


def test_saved_predictions_replay_to_the_same_scores() -> None:
    ids = ["agent_multi_step_14", "agent_multi_turn_26", "agent_multi_turn_4"]
    scripts = {i: ["Hello?", *reference_paths(ENTRIES[i])[0]] for i in ids}
    scripts["agent_multi_turn_4"] = scripts["agent_multi_turn_4"][:2]  # stops short: fails
    live = run(
        ids,
        scripted_agent(scripts),
        text_responder(lambda rs: [[FINISH if len(r.messages) > 3 else "Go on."] for r in rs]),
    )
    saved = Predictions({NAME: {r.sample_id: r.output for r in live}})
    replayed = benchmark().run(ids, saved, DATA_DIR)
    assert [r.score for r in live] == [1.0, 1.0, 0.0]
    assert [(r.score, r.metrics) for r in replayed] == [(r.score, r.metrics) for r in live]
    assert live[2].metrics["process"] == pytest.approx(1 / 3)


def test_malformed_output_is_logged_per_sample_never_raised() -> None:
    bad = [
        "[send_message(sender_name=Eve)]",
        "[no_such_api()]",
        "[delete_message(message_id='4')]",
        "Let me think about it.",
        "[turn_on_wifi()]",
    ]
    respond = scripted_agent({"agent_multi_step_4": bad})
    [result] = run(["agent_multi_step_4"], respond)
    assert result.score == 0.0 and not result.parsed
    errors = [m["error"] for m in result.extra["malformed"]]
    assert len(errors) == 4
    assert "not a literal" in errors[0] and "unknown API 'no_such_api'" in errors[1]
    assert "message_id must be integer" in errors[2]
    assert result.answer == ["turn_on_wifi()"]
    garbage = Predictions(
        {NAME: {"agent_multi_step_4": {"not": "a list"}, "agent_multi_turn_0": [{"role": "robot"}]}}
    )
    replayed = benchmark().run(["agent_multi_step_4", "agent_multi_turn_0"], garbage, DATA_DIR)
    assert [(r.score, r.parsed) for r in replayed] == [(0.0, False), (0.0, False)]


def test_the_model_sees_execution_errors_and_results() -> None:
    script = ["[delete_message(message_id='4')]", "[turn_on_wifi()]"]
    requests: list[GenRequest] = []
    agent = scripted_agent({"agent_multi_step_4": script})

    def respond(batch: Sequence[GenRequest]) -> list[list[Completion]]:
        requests.extend(batch)
        return agent(batch)

    run(["agent_multi_step_4"], respond)
    history = requests[2].messages[1]["content"]
    assert (
        'execution result:["Error during execution: delete_message: message_id must be integer'
        in history
    )
    assert "'Wi-Fi has been turned on'" in history


def test_turn_cap_and_options_are_validated() -> None:
    respond = scripted_agent({"agent_multi_step_2": ["[login_device()]"] * 50})
    [capped] = benchmark(max_dialog_turns=6).run(["agent_multi_step_2"], respond, DATA_DIR)
    assert capped.extra["turns"] == 6 and not capped.extra["finished"]
    assert len(capped.output) == 3
    with pytest.raises(DeclarationError, match="options.user_modle"):
        benchmark(user_modle="x")
    declaration = load_declaration(BENCHMARKS_DIR / f"{NAME}.yaml")
    assert isinstance(build_benchmark(declaration), AceBenchBenchmark)
    with pytest.raises(DeclarationError, match="--data-dir"):
        build_benchmark(declaration).sample_ids(None)
