"""`suite:NAME@VERSION[:SPLIT]` through spade-eval: solutions score 1.0, a blind player does
not, and a split's benchmark plays exactly that split's envs on their eval seeds."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spade.evals.benchmark import build_benchmark
from spade.evals.declarations import DeclarationError
from spade.evals.run import resolve_benchmarks, run_benchmark
from spade.rollout import GenRequest
from spade.suites import load_suite
from tests.replies import text_responder

SUITE = "suite:spade-seed@1.0.0"
SPLIT_SUITE = "spade-seed@1.1.0"
HELDOUT = f"suite:{SPLIT_SUITE}:heldout"
ROOT = Path(__file__).resolve().parents[2]


def solution_predictions(
    ids: list[str], benchmark: str = SUITE, suite_ref: str = "spade-seed@1.0.0"
) -> list[dict[str, object]]:
    suite = load_suite(suite_ref, root=ROOT / "envs_snapshots")
    envs = {env.id: env for env in suite.envs}
    lines = []
    for sample_id in ids:
        env_id, _, seed = sample_id.rpartition("/")
        with envs[env_id].remote() as env:
            env.reset(int(seed))
            lines.append({"benchmark": benchmark, "id": sample_id, "output": env.solution()})
    return lines


def test_solutions_replayed_as_predictions_all_succeed(tmp_path: Path) -> None:
    suite = load_suite("spade-seed@1.0.0", root=ROOT / "envs_snapshots")
    ids = [f"{env.id}/{env.entry.eval_seeds[0]}" for env in suite.envs[::4]]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(p) + "\n" for p in solution_predictions(ids)))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "spade.cli.eval", "--predictions", str(predictions),
               "--output", str(out)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    entry = json.loads((out / "results.json").read_text())["benchmarks"][SUITE]
    assert entry["n"] == len(ids)
    assert entry["metrics"]["success"]["value"] == 1.0
    assert entry["metrics"]["return"]["value"] == 1.0
    kinds = {m for m in entry["metrics"] if m.startswith("success[kind=")}
    assert kinds == {"success[kind=game]", "success[kind=reasoning]", "success[kind=tool_use]"}


def test_blind_player_rarely_succeeds_and_episodes_end() -> None:
    (declaration,), _ = resolve_benchmarks([SUITE], None)

    @text_responder
    def blind(requests: list[GenRequest]) -> list[list[str]]:
        return [["\\boxed{1}"] for _ in requests]

    run = run_benchmark(declaration, blind, None, limit=12)
    assert len(run.samples) == 12
    assert sum(s.score for s in run.samples) <= 2
    assert all(s.extra["terminated"] or s.extra["truncated"] for s in run.samples)
    first = run.samples[0]
    assert first.prompt[0]["role"] == "system" and first.output


def test_a_split_benchmark_is_that_splits_envs_on_their_eval_seeds() -> None:
    suite = load_suite(SPLIT_SUITE, root=ROOT / "envs_snapshots")
    ids: dict[str, list[str]] = {}
    for split in ("heldout", "train"):
        (declaration,), _ = resolve_benchmarks([f"suite:{SPLIT_SUITE}:{split}"], None)
        assert declaration.options["split"] == split and declaration.version == "1.1.0"
        ids[split] = build_benchmark(declaration).sample_ids(None)
        envs = suite.envs_in(split)
        assert ids[split] == [f"{env.id}/{seed}" for env in envs for seed in env.entry.eval_seeds]
    assert len(ids["heldout"]) == 12 * 10
    (whole,), _ = resolve_benchmarks([f"suite:{SPLIT_SUITE}"], None)
    assert sorted(ids["heldout"] + ids["train"]) == sorted(build_benchmark(whole).sample_ids(None))


def test_heldout_solutions_replayed_as_predictions_all_succeed(tmp_path: Path) -> None:
    suite = load_suite(SPLIT_SUITE, root=ROOT / "envs_snapshots")
    ids = [f"{env.id}/{env.entry.eval_seeds[0]}" for env in suite.envs_in("heldout")]
    lines = solution_predictions(ids, HELDOUT, SPLIT_SUITE)
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(p) + "\n" for p in lines))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "spade.cli.eval", "--predictions", str(predictions),
               "--output", str(out)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    entry = json.loads((out / "results.json").read_text())["benchmarks"][HELDOUT]
    assert entry["n"] == 12 and entry["options"]["split"] == "heldout"
    assert entry["metrics"]["success"]["value"] == 1.0
    assert entry["metrics"]["return"]["value"] == 1.0


def test_a_heldout_benchmark_never_plays_a_train_env() -> None:
    (declaration,), _ = resolve_benchmarks([HELDOUT], None)
    env = load_suite(SPLIT_SUITE, root=ROOT / "envs_snapshots").envs_in("train")[0]

    @text_responder
    def blind(requests: list[GenRequest]) -> list[list[str]]:
        return [["\\boxed{1}"] for _ in requests]

    with pytest.raises(ValueError, match=f"{re.escape(HELDOUT)}: unknown sample ids"):
        run_benchmark(declaration, blind, None, ids=[f"{env.id}/{env.entry.eval_seeds[0]}"])


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (f"suite:{SPLIT_SUITE}:test", "unknown split 'test'; known: train, heldout"),
        ("suite:spade-seed@1.0.0:heldout", "has no heldout envs (an unsplit suite)"),
    ],
)
def test_a_bad_split_is_a_one_line_error(name: str, message: str) -> None:
    with pytest.raises(DeclarationError, match=re.escape(message)):
        resolve_benchmarks([name], None)


def test_spade_eval_names_an_unknown_split_in_one_line(tmp_path: Path) -> None:
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"benchmark": f"suite:{SPLIT_SUITE}:test", "id": "x",
                                       "output": []}) + "\n")  # fmt: skip
    command = [sys.executable, "-m", "spade.cli.eval", "--predictions", str(predictions),
               "--output", str(tmp_path / "out")]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 2
    assert "unknown split 'test'" in result.stderr and "Traceback" not in result.stderr


def test_a_turn_cap_option_ends_long_episodes_as_truncated() -> None:
    (declaration,), _ = resolve_benchmarks([SUITE], None)
    capped = declaration.model_copy(update={"options": {**declaration.options, "turn_cap": 3}})

    @text_responder
    def blind(requests: list[GenRequest]) -> list[list[str]]:
        return [["\\boxed{1}"] for _ in requests]

    free = run_benchmark(declaration, blind, None, limit=12)
    run = run_benchmark(capped, blind, None, limit=12)
    assert max(s.extra["turns"] for s in free.samples) > 3  # the cap has episodes to end
    assert max(s.extra["turns"] for s in run.samples) <= 3
    ended = [s for s in run.samples if s.extra["turns"] == 3 and not s.extra["terminated"]]
    assert ended and all(s.extra["truncated"] and s.score == 0.0 for s in ended)


def test_a_bad_suite_option_is_a_one_line_error() -> None:
    (declaration,), _ = resolve_benchmarks([SUITE], None)
    bad = declaration.model_copy(update={"options": {"turn_cap": 0}})
    with pytest.raises(DeclarationError, match=r"options\.turn_cap: .*greater than or equal"):
        build_benchmark(bad)
