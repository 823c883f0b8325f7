"""`suite:NAME@VERSION` through spade-eval: solutions score 1.0, a blind player does not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from spade.evals.run import resolve_benchmarks, run_benchmark
from spade.rollout import GenRequest
from spade.suites import load_suite
from tests.replies import text_responder

SUITE = "suite:spade-seed@1.0.0"
ROOT = Path(__file__).resolve().parents[2]


def solution_predictions(ids: list[str]) -> list[dict[str, object]]:
    suite = load_suite("spade-seed@1.0.0", root=ROOT / "envs_snapshots")
    envs = {env.id: env for env in suite.envs}
    lines = []
    for sample_id in ids:
        env_id, _, seed = sample_id.rpartition("/")
        with envs[env_id].remote() as env:
            env.reset(int(seed))
            lines.append({"benchmark": SUITE, "id": sample_id, "output": env.solution()})
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
