"""The `bfcl` runner on the real data and bfcl-eval's real backends and checker.

Gold predictions pass all 800 entries, empty ones none; a wrong call fails at its turn; an
oracle model passes through the whole inference loop in both tool-calling modes; malformed
replies, dangerous calls and endless backend work are failures that are logged, never
exceptions out of `run`.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("bfcl_eval", reason="needs bfcl-eval (pip install --no-deps bfcl-eval mpmath)")

from spade.evals.bfcl.runner import BfclBenchmark  # noqa: E402
from spade.evals.declarations import DeclarationError  # noqa: E402
from spade.evals.run import run_benchmark  # noqa: E402
from spade.models.policy import Completion  # noqa: E402
from spade.rollout import (
    GenRequest,  # noqa: E402
    Predictions,  # noqa: E402
)
from tests.evals.bfcl_helpers import (  # noqa: E402
    UMBRELLA,
    benchmark,
    declaration,
    entries,
    gold,
    oracle,
)
from tests.replies import text_responder  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT.parent / "shared" / "data"


def score_saved(outputs: dict[str, object], bench: BfclBenchmark | None = None) -> list:
    bench = bench or benchmark()
    respond = Predictions({bench.declaration.name: outputs})
    return bench.run(list(outputs), respond, None)


def test_ids_are_bfcl_ids_in_dataset_order() -> None:
    ids = benchmark().sample_ids(None)
    assert len(ids) == 800
    assert ids[:2] == ["multi_turn_base_0", "multi_turn_base_1"]
    assert ids[200] == "multi_turn_miss_func_0" and ids[-1] == "multi_turn_long_context_199"


@pytest.mark.skipif(not DATA_DIR.is_dir(), reason="no shared/data checkout")
def test_data_dir_and_wheel_give_the_same_entries() -> None:
    assert BfclBenchmark(declaration()).entries(DATA_DIR) == entries()


def test_ground_truth_as_predictions_passes_all_800() -> None:
    results = score_saved({i: gold(e) for i, e in entries().items()})
    assert [r.extra["error_message"] for r in results if not r.extra["valid"]] == []
    assert all(r.score == 1.0 and r.parsed for r in results)


def test_empty_predictions_fail_all_800() -> None:
    results = score_saved({i: [[] for _ in e.ground_truth] for i, e in entries().items()})
    assert all(r.score == 0.0 for r in results)
    assert {r.extra["error_type"] for r in results} == {"multi_turn:empty_turn_model_response"}


def test_a_model_that_says_nothing_scores_zero() -> None:
    bench = benchmark()
    ids = bench.slice_ids(bench.sample_ids(None), 12, seed=3)
    requests: list[GenRequest] = []

    @text_responder
    def silent(batch: list[GenRequest]) -> list[list[str]]:
        requests.extend(batch)
        return [[""] for _ in batch]

    results = bench.run(ids, silent, None)
    assert all(r.score == 0.0 and r.output == [[]] * len(r.target) for r in results)
    assert len(requests) == sum(len(r.target) for r in results)  # one reply ends each turn


def test_a_wrong_call_fails_at_its_turn() -> None:
    entry = entries()["multi_turn_base_0"]
    output = gold(entry)
    turn = next(i for i, t in enumerate(entry.ground_truth) if i >= 2 and t)
    wrong = copy.deepcopy(output)
    wrong[turn][0][-1] = "cd(folder='nowhere')"  # the turn's last call replaced
    missing = copy.deepcopy(output)
    missing[turn] = []
    wrong_result, missing_result = score_saved({entry.id: wrong}), score_saved({entry.id: missing})
    assert wrong_result[0].extra["failed_turn"] == turn and not wrong_result[0].extra["valid"]
    assert missing_result[0].extra["failed_turn"] == turn
    assert missing_result[0].extra["error_type"] == "multi_turn:empty_turn_model_response"


def test_malformed_predictions_are_logged_failures() -> None:
    outputs = {
        "multi_turn_base_1": "not a list",
        "multi_turn_base_2": gold(entries()["multi_turn_base_2"])[:-1],
        "multi_turn_base_3": [[[1, 2]], *gold(entries()["multi_turn_base_3"])[1:]],
    }
    first, second, third = score_saved(outputs)
    assert first.extra["error_type"] == "multi_turn:inference_error" and not first.parsed
    assert second.extra["error_type"] == "multi_turn:force_terminated"
    assert not third.parsed and third.extra["malformed"][0]["turn"] == 0 and third.score == 0.0


def test_raw_reply_steps_are_decoded_like_bfcl_result_files() -> None:
    entry = entries()["multi_turn_miss_param_4"]
    raw = [["[" + ", ".join(t) + "]", "All done."] if t else ["I need more details."]
           for t in entry.ground_truth]  # fmt: skip
    (result,) = score_saved({entry.id: raw})
    assert result.extra["valid"], result.extra["error_message"]
    assert result.answer == [[t] if t else [] for t in entry.ground_truth]


def test_unbalanced_ids_still_average_categories_equally() -> None:
    table = entries()
    outputs: dict[str, object] = {
        i: gold(table[i]) for i in ["multi_turn_base_0", "multi_turn_base_1", "multi_turn_base_2"]
    }
    outputs["multi_turn_miss_func_0"] = []  # wrong
    results = score_saved(outputs)
    assert sum(r.score for r in results) / len(results) == pytest.approx(0.5)
    assert [r.metrics for r in results][-1] == {"accuracy[miss_func]": 0.0}


def test_slices_take_an_equal_seeded_share_of_each_category() -> None:
    bench = benchmark()
    ids = bench.sample_ids(None)
    chosen = bench.slice_ids(ids, 10, seed=1234)
    counts = [sum(i.startswith(f"multi_turn_{c}_") for i in chosen)
              for c in ("base", "miss_func", "miss_param", "long_context")]  # fmt: skip
    assert counts == [3, 3, 2, 2]
    assert chosen == bench.slice_ids(ids, 10, seed=1234) == sorted(chosen, key=ids.index)
    positions = {int(i.rsplit("_", 1)[1]) for i in chosen}
    assert len(positions) > 3  # not the same task in every category


@pytest.mark.parametrize("mode", ["prompting", "function_calling"])
def test_an_oracle_model_passes_through_the_inference_loop(mode: str) -> None:
    bench = BfclBenchmark(declaration(mode=mode))
    ids = bench.slice_ids(bench.sample_ids(None), 24, seed=7)
    seen: list[int] = []
    results = bench.run(ids, oracle(mode), None, seen.append)
    assert [r.extra["error_message"] for r in results if not r.extra["valid"]] == []
    assert sum(seen) == len(ids)
    assert all([len(t) for t in r.output] == [int(bool(t)) for t in r.target] for r in results)
    first = results[0]
    roles = [m["role"] for m in first.prompt]
    assert roles[:3] == (["system", "user", "assistant"] if mode == "prompting" else
                         ["user", "assistant", "tool"])  # fmt: skip


def test_held_out_functions_come_back_at_their_turn() -> None:
    entry = entries()["multi_turn_miss_func_0"]
    (held_turn,) = entry.missed_functions
    held = {doc["name"] for doc in entry.missed_functions[held_turn]}
    requests: list[GenRequest] = []

    def model(batch: list[GenRequest]) -> list[list[Completion]]:
        requests.extend(batch)
        return oracle("function_calling")(batch)

    BfclBenchmark(declaration(mode="function_calling")).run([entry.id], model, None)
    for request in requests:
        offered = {tool["function"]["name"] for tool in request.tools or ()}
        turn = sum(m["role"] == "user" for m in request.messages) - 1
        assert (held <= offered) == (turn >= held_turn)
    assert any("updated some more functions" in m["content"] for m in requests[-1].messages
               if m["role"] == "user")  # fmt: skip


def test_bad_replies_are_failures_logged_per_sample() -> None:
    replies = iter([
        "[cd(folder=",                          # unparseable: ends the turn
        "[no_such_function(x=1)]",              # unknown function: an error result
        "[cd(folder=5)]",                       # wrong type: the backend raises
        "[open(file='/etc/passwd')]",           # refused: never evaluated
        "[__import__(name='os')]",
        "Thanks.",
    ])  # fmt: skip
    seen: list[GenRequest] = []

    @text_responder
    def model(batch: list[GenRequest]) -> list[list[str]]:
        seen.extend(batch)
        return [[next(replies, "Thanks.")] for _ in batch]

    (result,) = BfclBenchmark(declaration()).run(["multi_turn_base_0"], model, None)
    assert result.score == 0.0 and not result.extra["valid"]
    assert result.extra["decode_errors"][0]["reply"] == "[cd(folder="
    errors = [e["result"] for e in result.extra["call_errors"]]
    assert errors[0] == "Error during execution: name 'no_such_function' is not defined"
    assert errors[1].startswith("Error during execution:")
    assert "not allowed" in errors[2] and "not allowed" in errors[3]
    tool_messages = [m["content"] for m in seen[-1].messages if m["role"] == "tool"]
    assert tool_messages == errors


def test_endless_backend_work_times_out_and_the_episode_goes_on() -> None:
    bench = BfclBenchmark(declaration("bfcl_v4_multi_turn_base", backend_timeout_s=2))
    entry = next(
        e
        for e in bench.entries(None).values()
        if "MathAPI" in e.involved_classes and "GorillaFileSystem" in e.involved_classes
    )
    replies = iter(["[pwd()]", "[power(base=10, exponent=10**10)]", "[pwd()]", "Done."])

    @text_responder
    def model(batch: list[GenRequest]) -> list[list[str]]:
        return [[next(replies, "Done.")] for _ in batch]

    (result,) = bench.run([entry.id], model, None)
    results = [m["content"] for m in result.prompt if m["role"] == "tool"]
    assert "did not answer within 2 s" in results[1]
    assert results[0] == results[2]  # the restarted worker replayed the first step


def test_a_model_that_never_stops_calling_is_force_quit_after_20_steps() -> None:
    requests: list[GenRequest] = []

    @text_responder
    def model(batch: list[GenRequest]) -> list[list[str]]:
        requests.extend(batch)
        return [["[pwd()]"] for _ in batch]

    (result,) = BfclBenchmark(declaration()).run(["multi_turn_base_0"], model, None)
    assert len(requests) == 21 and result.extra["force_quit"]  # BFCL: quit when count > 20
    assert result.extra["steps"] == [21]
    assert result.extra["error_type"] == "multi_turn:force_terminated"


def test_function_calling_reads_native_tool_calls_and_renders_them_back() -> None:
    entry = entries()["multi_turn_base_0"]
    reply = '<tool_call>\n{"name": "ls", "arguments": {"a": true}}\n</tool_call>'
    seen: list[GenRequest] = []

    @text_responder
    def model(batch: list[GenRequest]) -> list[list[str]]:
        seen.extend(batch)
        return [[reply if len(seen) == 1 else "done"] for _ in batch]

    (result,) = BfclBenchmark(declaration(mode="function_calling")).run([entry.id], model, None)
    assert result.output[0] == [["ls(a=True)"]]
    assistant, tool = seen[1].messages[-2:]
    assert assistant["tool_calls"][0]["function"] == {"name": "ls", "arguments": {"a": True}}
    assert tool["role"] == "tool" and tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert seen[0].tools and seen[0].tools[0]["type"] == "function"


def test_options_are_checked() -> None:
    with pytest.raises(DeclarationError, match="options.mode"):
        BfclBenchmark(declaration(mode="json"))


def test_predictions_file_through_spade_eval(tmp_path: Path) -> None:
    table = entries()
    ids = benchmark().slice_ids(list(table), 8, seed=1)
    lines = [{"benchmark": UMBRELLA, "id": i, "output": gold(table[i])} for i in ids]
    lines[0]["output"] = []
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "spade.cli.eval", "--predictions", str(predictions),
               "--output", str(out)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "results.json").read_text())["benchmarks"][UMBRELLA]
    assert summary["n"] == 8 and summary["primary"] == "accuracy"
    assert summary["metrics"]["accuracy"]["value"] == pytest.approx((0.5 + 1 + 1 + 1) / 4)
    assert summary["metrics"]["accuracy[base]"]["value"] == 0.5


def test_run_benchmark_uses_the_declared_slices() -> None:
    run = run_benchmark(declaration(), oracle(), None, preset="ci")
    assert run.summary()["metrics"]["accuracy"]["value"] == 1.0
    assert len(run.samples) == declaration().slices.ci


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["prompting", "function_calling"])
def test_an_oracle_model_passes_all_800_entries(mode: str) -> None:
    bench = BfclBenchmark(declaration(mode=mode))
    results = bench.run(bench.sample_ids(None), oracle(mode), None)
    assert [r.sample_id for r in results if not r.extra["valid"]] == []


def test_run_benchmark_reports_its_total_before_the_first_sample() -> None:
    calls: list[tuple[str, int, int]] = []
    run_benchmark(declaration(), oracle(), None, preset="ci",
                  progress=lambda name, done, total: calls.append((name, done, total)))  # fmt: skip
    total = declaration().slices.ci
    assert calls[0] == (declaration().name, 0, total)
    assert calls[-1] == (declaration().name, total, total)
