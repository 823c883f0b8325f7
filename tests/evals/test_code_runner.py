"""The `code` runner on the real HumanEval and MBPP data: canonical solutions pass in the
sandbox, broken ones fail, and the runner scores responder answers end to end.

Data comes from $SPADE_DATA_DIR (default ../shared/data); the tests skip without it.
The responders here are plain functions returning canned answers, standing in for a model.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from spade.evals.benchmark import build_benchmark
from spade.evals.code_problems import CodeProblem
from spade.evals.code_runner import CodeBenchmark
from spade.evals.declarations import BENCHMARKS_DIR, Declaration, DeclarationError, load_declaration
from spade.rollout import GenRequest
from spade.sandbox.programs import run_programs
from tests.data import DATA_DIR  # noqa: E402
from tests.replies import text_responder

pytestmark = pytest.mark.skipif(
    not (DATA_DIR / "humaneval").is_dir(), reason=f"no benchmark data in {DATA_DIR}"
)
MBPP_SUBSET = 60


def declaration(name: str, **changes: object) -> Declaration:
    loaded = load_declaration(BENCHMARKS_DIR / f"{name}.yaml")
    return loaded.model_copy(update=changes) if changes else loaded


def problems(name: str) -> list[CodeProblem]:
    benchmark = build_benchmark(declaration(name))
    assert isinstance(benchmark, CodeBenchmark)
    return list(benchmark.problems(DATA_DIR).values())


def fenced(code: str) -> str:
    return f"Here is the solution:\n\n```python\n{code}\n```\n\nIt handles the edge cases."


def responder(answer: Callable[[CodeProblem], list[str]], benchmark: CodeBenchmark):  # type: ignore[no-untyped-def]
    by_id = benchmark.problems(DATA_DIR)

    @text_responder
    def respond(requests: Sequence[GenRequest]) -> list[list[str]]:
        return [answer(by_id[r.sample_id]) for r in requests]

    return respond


def assert_all_pass(chosen: list[CodeProblem], timeout_s: float) -> None:
    # Through extraction, as a model's answer would go: the fenced reference with prose.
    solutions = [p.solution(fenced(p.reference)) for p in chosen]
    assert all(s is not None for s in solutions)
    programs = [p.program(s) for p, s in zip(chosen, solutions, strict=True) if s is not None]
    results = run_programs(programs, timeout_s)
    failed = [
        (p.sample_id, r.status, r.detail)
        for p, r in zip(chosen, results, strict=True)
        if not r.passed
    ]
    assert not failed


# -- data ------------------------------------------------------------------------------------
def test_sample_ids_are_the_datasets_own() -> None:
    humaneval = build_benchmark(declaration("humaneval")).sample_ids(DATA_DIR)
    assert len(humaneval) == 164 and humaneval[:2] == ["HumanEval/0", "HumanEval/1"]
    mbpp = build_benchmark(declaration("mbpp")).sample_ids(DATA_DIR)
    # The sanitized set's problems in the test range 11-510 (HF: mbpp/sanitized, test).
    assert len(mbpp) == 257 and mbpp[0] == "11"
    assert all(11 <= int(i) <= 510 for i in mbpp)


def test_mbpp_prompt_shows_the_tests_and_three_examples() -> None:
    problem = problems("mbpp")[0]
    roles = [m["role"] for m in problem.messages]
    assert roles == ["user", "assistant"] * 3 + ["user"]
    last = problem.messages[-1]["content"]
    assert "You are an expert Python programmer" in last
    assert all(line in last for line in problem.tests.splitlines())


def test_humaneval_prompt_includes_the_function_to_complete() -> None:
    problem = problems("humaneval")[0]
    (message,) = problem.messages
    assert "def has_close_elements(" in message["content"] and "```python" in message["content"]


# -- canonical and broken solutions in the sandbox --------------------------------------------
def test_every_humaneval_canonical_solution_passes() -> None:
    assert_all_pass(problems("humaneval"), timeout_s=10)  # all 164: ~1-2 s on 2 cores


HUMANEVAL_ANSWER_SHAPES = {
    # A base model continuing the prompt: the canonical body alone.
    "body only": lambda p: p.reference[len(p.prompt_code or "") :],
    # A chat model that lost the first line's indentation, inside a fence.
    "body, first line dedented": lambda p: (
        "```python\n" + p.reference[len(p.prompt_code or "") :].lstrip() + "```"
    ),
    # The function plus the model's own (wrong) assert and a usage block.
    "function with noise": lambda p: (
        f"```python\n{p.reference}\n\nprint({p.entry_point})\nassert False\n```\n"
        "Usage:\n```python\nprint('hi')\n```"
    ),
}


@pytest.mark.parametrize("shape", list(HUMANEVAL_ANSWER_SHAPES), ids=list(HUMANEVAL_ANSWER_SHAPES))
def test_every_humaneval_canonical_solution_passes_in_other_answer_shapes(shape: str) -> None:
    chosen = problems("humaneval")
    solutions = [p.solution(HUMANEVAL_ANSWER_SHAPES[shape](p)) for p in chosen]
    assert [p.sample_id for p, s in zip(chosen, solutions, strict=True) if s is None] == []
    programs = [p.program(s) for p, s in zip(chosen, solutions, strict=True) if s is not None]
    assert all(r.passed for r in run_programs(programs, timeout_s=10))


def test_mbpp_reference_solutions_pass_on_a_seeded_subset() -> None:
    chosen = random.Random(0).sample(problems("mbpp"), MBPP_SUBSET)
    assert_all_pass(chosen, timeout_s=20)


@pytest.mark.slow
def test_every_mbpp_reference_solution_passes() -> None:
    assert_all_pass(problems("mbpp"), timeout_s=20)  # task 123 alone takes ~5 s


SIGNATURE = "def {name}(*args, **kwargs)"
BROKEN = {
    "wrong value": SIGNATURE + ":\n    return None\n",
    "raises": SIGNATURE + ":\n    raise ValueError('no')\n",
    "sys.exit(0) in the function": SIGNATURE + ":\n    import sys\n    sys.exit(0)\n",
    "os._exit(0) in the function": SIGNATURE + ":\n    import os\n    os._exit(0)\n",
    "syntax error": SIGNATURE + "\n    return None\n",  # no colon
}


@pytest.mark.parametrize("dataset", ["humaneval", "mbpp"])
def test_broken_solutions_fail(dataset: str) -> None:
    chosen = random.Random(1).sample(problems(dataset), 8)
    programs = [p.program(t.format(name=p.entry_point)) for p in chosen for t in BROKEN.values()]
    results = run_programs(programs, timeout_s=10)
    passed = [r for r in results if r.passed]
    assert not passed


@pytest.mark.parametrize("dataset", ["humaneval", "mbpp"])
def test_exit_after_a_correct_solution_but_before_the_tests_is_not_a_pass(dataset: str) -> None:
    # Bypasses the sanitiser (which would drop these lines) to test the harness itself: the
    # function is correct, but the program leaves before any assert runs.
    chosen = problems(dataset)[:3]
    exits = ["import sys\nsys.exit(0)", "import os\nos._exit(0)", "exit(0)"]
    programs = [p.program(f"{p.reference}\n{e}\n") for p in chosen for e in exits]
    results = run_programs(programs, timeout_s=10)
    assert not [r for r in results if r.passed]


def test_an_infinite_loop_times_out() -> None:
    problem = problems("humaneval")[0]
    program = problem.program(f"def {problem.entry_point}(*args):\n    while True:\n        pass\n")
    (result,) = run_programs([program], timeout_s=1)
    assert result.status == "timeout"


# -- the runner end to end --------------------------------------------------------------------
@pytest.mark.parametrize("name", ["humaneval", "mbpp"])
def test_runner_scores_canonical_answers_one_and_wrong_answers_zero(name: str) -> None:
    benchmark = build_benchmark(declaration(name))
    assert isinstance(benchmark, CodeBenchmark)
    ids = benchmark.sample_ids(DATA_DIR)[:10]
    ticks: list[int] = []
    right = benchmark.run(ids, responder(lambda p: [fenced(p.reference)], benchmark), DATA_DIR,
                          ticks.append)  # fmt: skip
    assert [s.sample_id for s in right] == ids and sum(ticks) == len(ids)
    assert all(s.score == 1.0 and s.parsed and s.metrics == {"pass@1": 1.0} for s in right)
    assert right[0].extra["status"] == ["passed"]

    wrong_code = "def {}(*args, **kwargs):\n    return 'not it'\n"
    wrong = benchmark.run(
        ids, responder(lambda p: [fenced(wrong_code.format(p.entry_point))], benchmark), DATA_DIR
    )
    assert all(s.score == 0.0 and s.parsed for s in wrong)
    assert wrong[0].extra["status"] == ["failed"] and "Error" in wrong[0].extra["detail"][0]


def test_runner_pass_at_k_with_several_answers_per_sample() -> None:
    generation = declaration("humaneval").generation.model_copy(update={"n": 3})
    benchmark = CodeBenchmark(declaration("humaneval", generation=generation))
    ids = benchmark.sample_ids(DATA_DIR)[:4]

    def answers(problem: CodeProblem) -> list[str]:
        wrong = f"def {problem.entry_point}(*a):\n    return 'not it'\n"
        return [fenced(problem.reference), fenced(wrong), "I don't know."]

    results = benchmark.run(ids, responder(answers, benchmark), DATA_DIR)
    for sample in results:
        assert sample.score == pytest.approx(1 / 3)
        assert sample.metrics["pass@2"] == pytest.approx(2 / 3)  # 1 - C(2,2)/C(3,2)
        assert sample.metrics["pass@3"] == 1.0
        assert sample.extra["status"] == ["passed", "failed", "no_code"]
        assert not sample.parsed and sample.answer[2] is None and len(sample.output) == 3


def test_runner_unparseable_answer_is_a_parse_failure_without_a_run() -> None:
    benchmark = build_benchmark(declaration("mbpp"))
    ids = benchmark.sample_ids(DATA_DIR)[:2]
    results = benchmark.run(
        ids, text_responder(lambda requests: [["no code here"] for _ in requests]), DATA_DIR
    )
    assert [(s.score, s.parsed, s.answer) for s in results] == [(0.0, False, None)] * 2
    assert results[0].extra["status"] == ["no_code"]


def test_runner_rejects_unknown_ids_and_altered_data(tmp_path: Path) -> None:
    benchmark = build_benchmark(declaration("humaneval"))
    with pytest.raises(ValueError, match="unknown sample ids"):
        benchmark.run(["HumanEval/9999"], lambda requests: [], DATA_DIR)
    copy = tmp_path / "humaneval"
    shutil.copytree(DATA_DIR / "humaneval", copy)
    (copy / "HumanEval.jsonl.gz").chmod(0o644)
    with open(copy / "HumanEval.jsonl.gz", "ab") as handle:
        handle.write(b"tampered")
    with pytest.raises(DeclarationError, match="sha256"):
        build_benchmark(declaration("humaneval")).sample_ids(tmp_path)


def test_bad_options_are_a_declaration_error() -> None:
    with pytest.raises(DeclarationError, match="options.timeout_s"):
        CodeBenchmark(declaration("humaneval", options={"dataset": "humaneval", "timeout_s": -1}))
