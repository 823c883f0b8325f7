"""The `reasoning_gym` runner on the real reasoning-gym generators and scorers.

The responders are plain functions over GenRequests: one answers with each item's gold
answer in Reasoning-Gym's answer tags, standing in for a perfect model.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from spade.evals.benchmark import build_benchmark
from spade.evals.declarations import BENCHMARKS_DIR, DeclarationError, load_declaration
from spade.evals.rg_runner import ReasoningGymBenchmark
from spade.rollout import GenRequest
from tests.replies import text_responder

CATEGORIES = ("rg_math", "rg_algorithmic", "rg_cognition", "rg_logic")


def benchmark(name: str, **options: object) -> ReasoningGymBenchmark:
    declaration = load_declaration(BENCHMARKS_DIR / f"{name}.yaml")
    if options:
        declaration = declaration.model_copy(update={"options": declaration.options | options})
    built = build_benchmark(declaration)
    assert isinstance(built, ReasoningGymBenchmark)
    return built


def gold_responder(bench: ReasoningGymBenchmark):  # type: ignore[no-untyped-def]
    @text_responder
    def respond(requests: Sequence[GenRequest]) -> list[list[str]]:
        golds = [bench.tasks.item(r.sample_id).entry["answer"] for r in requests]
        return [[f"Let me think step by step.\n<answer>{gold}</answer>"] for gold in golds]

    return respond


def assert_gold_scores_one(name: str, items: int) -> None:
    bench = benchmark(name)
    ids = [f"{task}/{i}" for task in bench.options.tasks for i in range(items)]
    results = bench.run(ids, gold_responder(bench), None)
    failed = [(r.sample_id, r.score, r.extra) for r in results if r.score != 1.0 or not r.parsed]
    assert not failed


@pytest.mark.parametrize("name", CATEGORIES)
def test_gold_answers_score_one_for_every_task(name: str) -> None:
    assert_gold_scores_one(name, items=2)


@pytest.mark.slow
@pytest.mark.parametrize("name", CATEGORIES)
def test_gold_answers_score_one_for_every_item(name: str) -> None:
    assert_gold_scores_one(name, items=benchmark(name).options.items_per_task)


def test_sample_ids_prompt_and_hard_configuration() -> None:
    bench = benchmark("rg_logic")
    ids = bench.sample_ids(None)
    assert len(ids) == len(bench.options.tasks) * 20 and ids[0] == "aiw/0"
    seen: list[GenRequest] = []

    @text_responder
    def respond(requests: Sequence[GenRequest]) -> list[list[str]]:
        seen.extend(requests)
        return [["no tags here"] for _ in requests]

    result = bench.run(["knights_knaves/3"], respond, None)[0]
    system, user = seen[0].messages
    assert "<answer>" in system["content"] and user["content"] == bench.tasks.item(
        "knights_knaves/3").question  # fmt: skip
    assert result.score == 0 and not result.parsed and result.answer is None
    assert result.extra["level"] == 2 and seen[0].sampling.max_new_tokens == 1024
    # The hard setting is the curriculum's level 2: more people than the library default.
    assert bench.tasks.config("knights_knaves")["n_people"] > 2


def test_items_do_not_depend_on_what_else_is_generated() -> None:
    first = benchmark("rg_math").tasks.item("basic_arithmetic/7").entry
    other = benchmark("rg_math").tasks
    for i in range(7):
        other.item(f"basic_arithmetic/{i}")
    assert other.item("basic_arithmetic/7").entry["question"] == first["question"]


def test_per_task_breakdown_and_partial_credit_pass_through() -> None:
    bench = benchmark("rg_algorithmic")

    @text_responder
    def respond(requests: Sequence[GenRequest]) -> list[list[str]]:
        return [["<answer>wrong</answer>"] for _ in requests]

    results = bench.run(["word_sorting/0", "spell_backward/1"], respond, None)
    assert [r.metrics.get("score[task=word_sorting]") for r in results][:1] == [results[0].score]
    assert all(r.parsed and r.answer == "wrong" and r.score < 1 for r in results)


def test_wrong_reasoning_gym_version_is_a_clear_error() -> None:
    bench = benchmark("rg_cognition", reasoning_gym_version="0.0.1")
    with pytest.raises(DeclarationError, match=r"reasoning-gym==0\.0\.1"):
        bench.run(["figlet_font/0"], text_responder(lambda rs: [["x"] for _ in rs]), None)


def test_declaration_errors() -> None:
    with pytest.raises(DeclarationError, match="unlisted tasks"):
        benchmark("rg_logic", levels={"sudoku": 1})
    with pytest.raises(ValueError, match="unknown sample id"):
        benchmark("rg_logic").tasks.item("sudoku/0")
