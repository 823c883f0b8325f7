"""The lm_eval runner, checked against lm-eval itself on the offline data in ../shared/data.

Outputs come from a replaying responder (our own seam: a function from requests to texts),
so each benchmark is scored on known gold, wrong and unparseable answers. The same outputs
are then scored by lm-eval directly, on lm-eval's own task definitions (only the data source
swapped, the way lm-eval's TaskFactory builds a task), and every per-sample metric must match.
"""

from __future__ import annotations

import json
import random
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import math_verify.grader
import pytest
from lm_eval import simple_evaluate
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM
from lm_eval.api.task import ConfigurableTask
from lm_eval.tasks import TaskManager
from lm_eval.tasks._yaml_loader import load_yaml
from math_verify import parse

from spade.cli.eval import print_summary
from spade.evals.benchmark import build_benchmark
from spade.evals.declarations import BENCHMARKS_DIR, Declaration, DeclarationError, load_declaration
from spade.evals.lm_eval_runner import LmEvalBenchmark
from spade.evals.lm_eval_tasks import lm_eval_tasks_dir, parse_options, render_tasks
from spade.evals.run import results_document, run_benchmark, write_results
from spade.evals.samples import SampleResult
from spade.evals.scoring_alarms import RETRY_SCALES
from spade.models import load_policy
from spade.models.policy import Completion
from spade.rollout import GenRequest, PolicyResponder
from tests.data import DATA_DIR  # noqa: E402
from tests.replies import completion

pytestmark = pytest.mark.skipif(
    not DATA_DIR.is_dir(), reason=f"offline benchmark data not found at {DATA_DIR}"
)
BENCHMARKS = ["gsm8k", "math500", "mmlu_stem", "bbh"]
GARBAGE = "I am not sure."  # no number, no letter phrase, no "answer is": nothing to extract


def declaration(name: str) -> Declaration:
    return load_declaration(BENCHMARKS_DIR / f"{name}.yaml")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# -- gold and wrong answers, written the way each task's extraction expects ------------------
def gsm8k_texts() -> dict[str, tuple[str, str]]:
    rows = read_jsonl(DATA_DIR / "gsm8k/test.jsonl")

    def final(i: int, delta: int = 0) -> str:
        number = int(rows[i]["answer"].split("####")[-1].strip().replace(",", "")) + delta
        return f"Let me work it out step by step.\nThe final answer is {number}"

    return {"0": ("gold", final(0)), "1": ("wrong", final(1, 1)), "2": ("garbage", GARBAGE),
            "1318": ("gold", final(1318))}  # fmt: skip


def math500_texts() -> dict[str, tuple[str, str]]:
    rows = read_jsonl(DATA_DIR / "math500/test.jsonl")

    def minerva(answer: str) -> str:
        return (f"We simplify, so the answer is $\\boxed{{{answer}}}$.\n"
                f"Final Answer: The final answer is ${answer}$. I hope it is correct.")  # fmt: skip

    ids = [row["unique_id"] for row in rows]
    return {
        ids[0]: ("gold", minerva(rows[0]["answer"])),
        ids[1]: ("wrong", minerva("-12345")),
        ids[2]: ("garbage", GARBAGE),
        ids[499]: ("gold", minerva(rows[499]["answer"])),
    }


def mmlu_texts() -> dict[str, tuple[str, str]]:
    rows = read_jsonl(DATA_DIR / "science/mmlu_stem_test.jsonl")

    def letter(i: int, shift: int = 0) -> str:
        choice = "ABCD"[(rows[i]["answer"] + shift) % 4]
        return f"## Step 1: Recall the facts.\nThe best answer is {choice}."

    return {"0": ("gold", letter(0)), "150": ("wrong", letter(150, 1)),
            "1000": ("garbage", GARBAGE), "3017": ("gold", letter(3017))}  # fmt: skip


def bbh_texts() -> dict[str, tuple[str, str]]:
    def target(sample_id: str) -> str:
        subtask, _, index = sample_id.partition("/")
        data = json.loads((DATA_DIR / f"reasoning/bbh/{subtask}.json").read_text("utf-8"))
        return str(data["examples"][int(index)]["target"])

    def answer(text: str) -> str:  # no capital Q and no blank line: lm-eval's stop sequences
        return f"Let's think step by step. We check each part in turn. So the answer is {text}."

    gold = ["boolean_expressions/0", "date_understanding/7", "multistep_arithmetic_two/1",
            "dyck_languages/2"]  # fmt: skip
    texts = {i: ("gold", answer(target(i))) for i in gold}
    texts["snarks/3"] = ("wrong", answer("nonsense"))
    texts["word_sorting/5"] = ("garbage", GARBAGE)
    return texts


CASES: dict[str, Callable[[], dict[str, tuple[str, str]]]] = {
    "gsm8k": gsm8k_texts, "math500": math500_texts, "mmlu_stem": mmlu_texts, "bbh": bbh_texts,
}  # fmt: skip


class Replay:
    """A responder that answers from fixed texts by SAMPLE_ID and keeps the requests."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.requests: list[GenRequest] = []

    def __call__(self, requests: Sequence[GenRequest]) -> list[list[Completion]]:
        self.requests.extend(requests)
        return [[completion(self.texts[r.sample_id])] for r in requests]


class Run:
    def __init__(self, name: str) -> None:
        self.declaration = declaration(name)
        self.kinds = CASES[name]()
        self.texts = {sample_id: text for sample_id, (_, text) in self.kinds.items()}
        self.responder = Replay(self.texts)
        self.progress: list[int] = []
        benchmark = build_benchmark(self.declaration)
        assert isinstance(benchmark, LmEvalBenchmark)
        self.results = benchmark.run(
            list(self.texts), self.responder, DATA_DIR, self.progress.append
        )
        self.by_id = {r.sample_id: r for r in self.results}


@pytest.fixture(scope="module")
def runs() -> dict[str, Run]:
    return {name: Run(name) for name in BENCHMARKS}


# -- scoring ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", BENCHMARKS)
def test_gold_scores_one_wrong_zero_garbage_is_a_parse_failure(runs: dict[str, Run], name: str):
    run = runs[name]
    assert [r.sample_id for r in run.results] == list(run.texts)  # the order asked for
    assert run.progress == [len(run.texts)]
    for sample_id, (kind, _) in run.kinds.items():
        result = run.by_id[sample_id]
        expected = {"gold": (1.0, True), "wrong": (0.0, True), "garbage": (0.0, False)}[kind]
        assert (result.score, result.parsed) == expected, (kind, result)
        assert result.score == result.metrics[run.declaration.primary]
        assert (result.answer is None) == (kind == "garbage")
    failures = sum(not r.parsed for r in run.results)
    assert failures == sum(kind == "garbage" for kind, _ in run.kinds.values())


def test_gsm8k_records_every_filter_and_the_chat(runs: dict[str, Run]):
    result = runs["gsm8k"].by_id["0"]
    assert result.metrics == {"exact_match,strict-match": 1.0, "exact_match,flexible-extract": 1.0}
    assert result.answer == result.target == "18"
    assert result.extra["filtered"] == {"strict-match": "18", "flexible-extract": "18"}
    # gsm8k_cot_llama: 8 exemplars as user/assistant turns, then the question.
    roles = [m["role"] for m in result.prompt]
    assert roles == ["user", "assistant"] * 8 + ["user"]
    assert "Janet" in result.prompt[-1]["content"]
    garbage = runs["gsm8k"].by_id["2"]
    assert garbage.extra["filtered"]["flexible-extract"] == "[invalid]"


def test_requests_carry_declared_budget_and_lm_eval_stops(runs: dict[str, Run]):
    for name, run in runs.items():
        generation = run.declaration.generation
        for request in run.responder.requests:
            assert request.phase == name
            assert request.sampling.max_new_tokens == generation.max_gen_toks
            assert request.sampling.temperature == 0.0
    gsm8k_stops = runs["gsm8k"].responder.requests[0].sampling.stop
    assert {"Q:", "</s>", "<|im_end|>"} <= set(gsm8k_stops)  # gsm8k_cot_llama's `until`
    bbh_stops = runs["bbh"].responder.requests[0].sampling.stop
    assert {"Q", "\n\n"} <= set(bbh_stops)
    # bbh: the task's description is the system turn, then 3 exemplars and the question.
    bbh_prompt = runs["bbh"].responder.requests[0].messages
    assert [m["role"] for m in bbh_prompt] == ["system"] + ["user", "assistant"] * 3 + ["user"]


def test_outputs_are_cut_at_lm_eval_stop_sequences_and_rngs_are_kept():
    text = "The final answer is 18\nQ: And another question? The final answer is 999"
    benchmark = build_benchmark(declaration("gsm8k"))
    before = random.getstate()
    (result,) = benchmark.run(["0"], Replay({"0": text}), DATA_DIR)
    assert random.getstate() == before  # lm-eval reseeds the global generators; restored
    assert result.output == "The final answer is 18\n"
    assert result.extra["raw_output"] == text
    assert result.score == 1.0


def test_unknown_sample_ids_are_refused():
    benchmark = build_benchmark(declaration("gsm8k"))
    with pytest.raises(ValueError, match="unknown sample ids"):
        benchmark.run(["99999"], Replay({}), DATA_DIR)


def test_scoring_cut_short_is_retried_and_counted_in_results_json(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    """A planted slow comparison (its alarm fires during it, as on a loaded machine): once
    for the first gold answer, which the retry then scores, and every time for the second."""
    texts = {i: text for i, (kind, text) in math500_texts().items() if kind == "gold"}
    rows = {row["unique_id"]: row for row in read_jsonl(DATA_DIR / "math500/test.jsonl")}
    once, always = (str(parse(rows[i]["solution"])[0]) for i in texts)
    slow_once = {once}
    real = math_verify.grader.sympy_expr_eq

    def comparison(gold: Any, target: Any, *rest: Any) -> bool:
        if str(gold) == always or str(gold) in slow_once:
            slow_once.discard(str(gold))
            signal.raise_signal(signal.SIGALRM)
        return real(gold, target, *rest)

    monkeypatch.setattr(math_verify.grader, "sympy_expr_eq", comparison)
    run = run_benchmark(declaration("math500"), Replay(texts), DATA_DIR, ids=list(texts))
    write_results(tmp_path, results_document([run], {"spec": "replay"}, {}), [run])
    retries = {r.sample_id: (r.scoring_retries, r.timed_out) for r in run.samples}
    assert list(retries.values()) == [(1, False), (len(RETRY_SCALES), True)]
    entry = json.loads((tmp_path / "results.json").read_text())["benchmarks"]["math500"]
    assert (entry["scoring_timeouts"], entry["scoring_retries"]) == (1, 1 + len(RETRY_SCALES))
    records = read_jsonl(tmp_path / "samples" / "math500.jsonl")
    assert [r["timed_out"] for r in records] == [False, True]
    print_summary({"benchmarks": {"math500": entry}})
    assert (
        "math500: 1 sample(s) hit the scoring time limit even when retried"
        in capsys.readouterr().out
    )


# -- the same outputs, scored by lm-eval on its own task definitions --------------------------
class ReplayLM(LM):
    """An lm-eval model answering each doc with a fixed text; prompts kept as JSON chats."""

    def __init__(self, text_for_doc: Callable[[dict[str, Any]], str]) -> None:
        super().__init__()
        self.text_for_doc = text_for_doc

    @property
    def tokenizer_name(self) -> str:
        return "replay"

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt=True):
        return json.dumps(chat_history)

    def generate_until(self, requests: list[Instance]) -> list[str]:
        return [self.text_for_doc(request.doc) for request in requests]

    def loglikelihood(self, requests):  # pragma: no cover - generative tasks only
        raise NotImplementedError

    def loglikelihood_rolling(self, requests):  # pragma: no cover
        raise NotImplementedError


def lm_eval_own_task(relative_yaml: str, data_source: dict[str, Any]) -> ConfigurableTask:
    """lm-eval's task from its own YAML, as its TaskFactory builds it, data source swapped."""
    config = load_yaml(lm_eval_tasks_dir() / relative_yaml, resolve_func=True)
    for key in ("tag", "group", "task_list"):
        config.pop(key, None)
    config.update(data_source)
    return ConfigurableTask(config=config)


def json_source(path: Path, tmp: Path, **kwargs: Any) -> dict[str, Any]:
    """A local JSON data source (its datasets cache in `tmp`, so none piles up)."""
    files = {"data_files": {"test": str(path)}, "cache_dir": str(tmp / "hf-datasets")}
    return {"dataset_path": "json", "dataset_name": None, "dataset_kwargs": {**files, **kwargs}}


def score_with_lm_eval(
    tasks: dict[str, tuple[ConfigurableTask, dict[int, str]]], texts: dict[str, str], key: str
) -> dict[str, dict[str, Any]]:
    """Run lm-eval on `tasks` ({name: (task, {doc index: SAMPLE_ID})}); per SAMPLE_ID, every
    metric as `metric,filter` plus the prompt and target lm-eval logged."""
    text_by_doc = {}
    for task, ids in tasks.values():
        for index, sample_id in ids.items():
            text_by_doc[str(task.eval_docs[index][key])] = texts[sample_id]
    output = simple_evaluate(
        model=ReplayLM(lambda doc: text_by_doc[str(doc[key])]),
        tasks=[task for task, _ in tasks.values()],
        task_manager=TaskManager(include_path=[], include_defaults=False),
        samples={name: sorted(ids) for name, (_, ids) in tasks.items()},
        apply_chat_template=True,
        fewshot_as_multiturn=True,
        bootstrap_iters=0,
    )
    assert output is not None
    scored: dict[str, dict[str, Any]] = {}
    for name, entries in output["samples"].items():
        for entry in entries:
            sample_id = tasks[name][1][entry["doc_id"]]
            record = scored.setdefault(sample_id, {"metrics": {}})
            record["prompt"] = json.loads(entry["arguments"][0][0])
            record["target"] = entry["target"]
            for metric in entry["metrics"]:
                record["metrics"][f"{metric},{entry['filter']}"] = float(entry[metric])
    return scored


def lm_eval_tasks_for(name: str, ids: list[str], tmp: Path) -> tuple[dict[str, Any], str]:
    """lm-eval's own tasks covering `ids`, with the doc field that identifies a doc."""
    if name == "gsm8k":
        task = lm_eval_own_task(
            "gsm8k/gsm8k-cot-llama.yaml", json_source(DATA_DIR / "gsm8k/test.jsonl", tmp)
        )
        return {"gsm8k_cot_llama": (task, {int(i): i for i in ids})}, "question"
    if name == "math500":
        rows = read_jsonl(DATA_DIR / "math500/test.jsonl")
        row_of = {row["unique_id"]: n for n, row in enumerate(rows)}
        source = json_source(DATA_DIR / "math500/test.jsonl", tmp)
        task = lm_eval_own_task("minerva_math/minerva_math500.yaml", source)
        return {"minerva_math500": (task, {row_of[i]: i for i in ids})}, "unique_id"
    if name == "mmlu_stem":
        rows = read_jsonl(DATA_DIR / "science/mmlu_stem_test.jsonl")
        tasks: dict[str, Any] = {}
        for subject in {rows[int(i)]["type"] for i in ids}:
            members = [n for n, row in enumerate(rows) if row["type"] == subject]
            path = tmp / f"{subject}.jsonl"
            path.write_text("".join(json.dumps(rows[n]) + "\n" for n in members), "utf-8")
            task = lm_eval_own_task(
                f"llama3/instruct/mmlu_cot/mmlu_{subject}.yaml", json_source(path, tmp)
            )
            chosen = {members.index(int(i)): i for i in ids if rows[int(i)]["type"] == subject}
            tasks[f"mmlu_cot_llama_{subject}"] = (task, chosen)
        return tasks, "question"
    tasks = {}
    for subtask in {i.partition("/")[0] for i in ids}:
        source = json_source(DATA_DIR / f"reasoning/bbh/{subtask}.json", tmp, field="examples")
        task = lm_eval_own_task(f"bbh/cot_fewshot/{subtask}.yaml", source)
        chosen = {int(i.partition("/")[2]): i for i in ids if i.startswith(f"{subtask}/")}
        tasks[f"bbh_cot_fewshot_{subtask}"] = (task, chosen)
    return tasks, "input"


@pytest.mark.parametrize("name", BENCHMARKS)
def test_scores_equal_lm_evals_own_scoring(runs: dict[str, Run], name: str, tmp_path: Path):
    run = runs[name]
    tasks, key = lm_eval_tasks_for(name, list(run.texts), tmp_path)
    theirs = score_with_lm_eval(tasks, run.texts, key)
    assert set(theirs) == set(run.by_id)
    for sample_id, ours in run.by_id.items():
        assert ours.metrics == theirs[sample_id]["metrics"], sample_id
        assert ours.prompt == theirs[sample_id]["prompt"], sample_id  # same chat, turn by turn
        assert ours.target == theirs[sample_id]["target"], sample_id


# -- ids, data and task definitions ----------------------------------------------------------
def test_sample_ids_follow_the_contract():
    ids = {name: build_benchmark(declaration(name)).sample_ids(DATA_DIR) for name in BENCHMARKS}
    assert ids["gsm8k"] == [str(i) for i in range(1319)]
    math500 = [row["unique_id"] for row in read_jsonl(DATA_DIR / "math500/test.jsonl")]
    assert ids["math500"] == math500 and len(math500) == 500
    assert ids["mmlu_stem"] == [str(i) for i in range(3018)]  # rows of mmlu_stem_test.jsonl
    assert len(ids["bbh"]) == 6511
    subtasks = {i.partition("/")[0] for i in ids["bbh"]}
    assert len(subtasks) == 27 and subtasks == set(parse_options(declaration("bbh")).subtasks)
    assert "snarks/177" in ids["bbh"] and "snarks/178" not in ids["bbh"]


@pytest.mark.parametrize("name", BENCHMARKS + ["aime25", "gpqa_diamond"])
def test_rendered_tasks_are_lm_evals_with_only_data_and_budget_replaced(name: str, tmp_path: Path):
    decl = declaration(name)
    options = parse_options(decl)
    local = DATA_DIR if decl.data else None  # aime25 / gpqa: not shipped, hub rendering only
    task_set = render_tasks(decl, options, local, tmp_path)
    for task in task_set.tasks[:3]:
        ours = load_yaml(tmp_path / f"{task.name}.yaml", resolve_func=False)
        upstream = load_yaml(ours_include(tmp_path / f"{task.name}.yaml"), resolve_func=False)
        changed = {k for k in ours.keys() | upstream.keys() if ours.get(k) != upstream.get(k)}
        allowed = {"task", "dataset_path", "dataset_name", "dataset_kwargs", "test_split"}
        assert changed - {"generation_kwargs"} <= allowed, changed
        # Generation: lm-eval's stops kept; only the budget and greedy decoding are declared.
        theirs, mine = upstream["generation_kwargs"], ours["generation_kwargs"]
        budget = {"max_gen_toks", "temperature", "do_sample"}
        assert {k: v for k, v in mine.items() if k not in budget} == {
            k: v for k, v in theirs.items() if k not in budget
        }
        assert mine["max_gen_toks"] == decl.generation.max_gen_toks
        assert (mine["temperature"], mine["do_sample"]) == (0.0, False)
        if local is None:  # no local files: lm-eval's own (hub) source, as declared
            assert "dataset_kwargs" not in changed
            assert decl.hub is not None and ours["dataset_path"] == decl.hub.path


def ours_include(path: Path) -> Path:
    return Path(load_yaml(path, resolve_func=False, recursive=False)["include"])


def test_without_data_dir_the_hub_is_the_source(tmp_path: Path):
    decl = declaration("gsm8k")
    task_set = render_tasks(decl, parse_options(decl), None, tmp_path)
    rendered = load_yaml(tmp_path / f"{task_set.names[0]}.yaml", resolve_func=False)
    assert (rendered["dataset_path"], rendered["dataset_name"]) == ("openai/gsm8k", "main")
    assert "data_files" not in json.dumps(rendered)


def test_bbh_exemplars_in_lm_eval_equal_the_local_cot_prompts():
    """lm-eval embeds BBH's 3-shot prompts in its YAML; they must be the original ones."""
    for subtask in parse_options(declaration("bbh")).subtasks:
        config = load_yaml(
            lm_eval_tasks_dir() / f"bbh/cot_fewshot/{subtask}.yaml", resolve_func=False
        )
        text = (DATA_DIR / f"reasoning/cot-prompts/{subtask}.txt").read_text("utf-8")
        description, _, shots = text.split("-----\n", 1)[1].partition("\n\nQ: ")
        pairs = []
        for shot in shots.split("\n\nQ: "):
            for separator in (
                "\nA: Let's think step by step.\n",
                "\nA: Let's think step by step. ",
            ):
                if separator in shot:
                    question, answer = shot.split(separator, 1)
                    pairs.append((question, answer.rstrip("\n")))
                    break
        samples = config["fewshot_config"]["samples"]
        assert pairs == [(s["input"], s["target"]) for s in samples], subtask
        assert config["description"] == description + "\n\n", subtask


def test_aime25_and_gpqa_need_their_files_under_data_dir(tmp_path: Path):
    for name, expected in (("aime25", "aime25/test.jsonl"), ("gpqa_diamond", "gpqa_diamond.csv")):
        benchmark = build_benchmark(declaration(name))
        with pytest.raises(DeclarationError, match=expected):
            benchmark.sample_ids(tmp_path)


# -- a real model ----------------------------------------------------------------------------
@pytest.mark.slow
def test_smollm2_answers_two_gsm8k_samples():
    policy = load_policy("smollm2-135m")
    decl = declaration("gsm8k")
    # A plumbing test: zero-shot and a short budget keep it to seconds on a CPU (the declared
    # run is 8-shot, ~1,250 prompt tokens, up to 512 new ones).
    generation = decl.generation.model_copy(update={"max_gen_toks": 16})
    options = {**decl.options, "num_fewshot": 0}
    decl = decl.model_copy(update={"generation": generation, "options": options})
    responder = PolicyResponder(policy, "smollm2-135m")
    results: list[SampleResult] = build_benchmark(decl).run(["0", "1"], responder, DATA_DIR)
    assert [r.sample_id for r in results] == ["0", "1"]
    for result in results:
        assert isinstance(result.output, str) and result.output
        assert [m["role"] for m in result.prompt] == ["user"]
        assert result.score in (0.0, 1.0)
        assert result.parsed == (result.answer is not None)
