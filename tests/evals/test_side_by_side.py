"""Benchmarks side by side: order kept, lm-eval on the main thread, a bound on how many run at
once, and a failure that ends the run without waiting for the rest."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from spade.evals.side_by_side import Job, run_side_by_side
from spade.suites import load_suite
from tests.evals.test_suite_runner import ROOT, solution_predictions


class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.threads: dict[str, str] = {}

    def job(self, name: str, runner: str = "suite", seconds: float = 0.05) -> Job[str]:
        def run() -> str:
            with self.lock:
                self.running += 1
                self.most = max(self.most, self.running)
                self.threads[name] = threading.current_thread().name
            time.sleep(seconds)
            with self.lock:
                self.running -= 1
            return name

        return Job(runner, run)


def test_results_keep_the_given_order_and_lm_eval_runs_on_the_main_thread() -> None:
    seen = Recorder()
    jobs = [seen.job("slow", seconds=0.3), seen.job("gsm8k", "lm_eval"), seen.job("fast"),
            seen.job("bbh", "lm_eval")]  # fmt: skip
    assert run_side_by_side(jobs, at_once=4) == ["slow", "gsm8k", "fast", "bbh"]
    main = threading.main_thread().name
    assert seen.threads["gsm8k"] == seen.threads["bbh"] == main
    assert seen.threads["slow"] != main and seen.threads["fast"] != main
    assert seen.most >= 2  # they did overlap


def test_at_most_at_once_jobs_run_together() -> None:
    seen = Recorder()
    jobs = [seen.job(f"suite{i}") for i in range(6)] + [seen.job("gsm8k", "lm_eval")]
    assert len(run_side_by_side(jobs, at_once=3)) == 7
    assert seen.most == 3


def test_one_at_a_time_runs_in_order_on_this_thread() -> None:
    seen = Recorder()
    order: list[str] = []
    jobs = [Job("suite", lambda n=n: order.append(n) or n) for n in ("a", "b", "c")]
    assert run_side_by_side(jobs, at_once=1) == ["a", "b", "c"] == order
    assert not seen.threads


def test_a_failure_ends_the_run_without_waiting_for_the_others() -> None:
    def broken() -> str:
        raise ValueError("bad data file")

    seen = Recorder()
    jobs = [seen.job("long", seconds=30.0), Job("games", broken)]
    started = time.perf_counter()
    with pytest.raises(ValueError, match="bad data file"):
        run_side_by_side(jobs, at_once=2)
    assert time.perf_counter() - started < 5.0


def test_a_failure_on_the_main_thread_is_raised_as_is() -> None:
    def broken() -> str:
        raise KeyError("doc 7")

    seen = Recorder()
    with pytest.raises(KeyError, match="doc 7"):
        run_side_by_side([seen.job("suite"), Job("lm_eval", broken)], at_once=2)


def test_spade_eval_runs_benchmarks_side_by_side_and_records_it(tmp_path: Path) -> None:
    """Two suite benchmarks scored at once (--jobs 2) through the CLI: every solution still
    succeeds in each, results keep the run's order, and the record says how it ran."""
    lines = []
    for benchmark, ref in (("suite:spade-seed@1.0.0", "spade-seed@1.0.0"),
                           ("suite:spade-seed@1.1.0:heldout", "spade-seed@1.1.0")):  # fmt: skip
        suite = load_suite(ref, root=ROOT / "envs_snapshots")
        envs = suite.envs_in("heldout") if benchmark.endswith("heldout") else suite.envs
        ids = [f"{env.id}/{env.entry.eval_seeds[0]}" for env in envs[::3]]
        lines += solution_predictions(ids, benchmark, ref)
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "spade.cli.eval", "--predictions", str(predictions),
               "--output", str(out), "--jobs", "2"]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    document = json.loads((out / "results.json").read_text())
    assert document["settings"]["jobs"] == 2
    names = ["suite:spade-seed@1.0.0", "suite:spade-seed@1.1.0:heldout"]
    assert list(document["benchmarks"]) == document["settings"]["benchmarks"] == names
    for name in names:
        entry = document["benchmarks"][name]
        assert entry["n"] == sum(line["benchmark"] == name for line in lines)
        assert entry["metrics"]["success"]["value"] == 1.0


@pytest.mark.parametrize(
    ("flags", "message"),
    [(["--jobs", "0"], "--jobs must be ≥ 1, got 0"),
     (["--jobs", "2", "--ray"], "--jobs is for a local run: --ray shards each benchmark over its "
      "workers")],
)  # fmt: skip
def test_a_bad_jobs_setting_is_a_one_line_error(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    command = [sys.executable, "-m", "spade.cli.eval", "--checkpoint", "smollm2-135m",
               *flags, "--output", str(tmp_path / "out")]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [f"error: spade-eval: {message}"]
