"""`spade-eval --ray` on a real cluster equals the local run sample by sample, and bad input
(an unreachable address, too few CPUs or GPUs, a worker killed twice) ends in one line with
no results.json.

Saved predictions here (no model: the default run stays short); the same with a tiny live
model, the completion cache and a worker killed mid-run is in the slow tests below.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from spade.cli.eval import main
from tests.data import DATA_DIR
from tests.distributed.conftest import CPUS, RayHead, free_port
from tests.evals.test_suite_runner import HELDOUT, SPLIT_SUITE, solution_predictions

ROOT = Path(__file__).resolve().parents[2]
needs_data = pytest.mark.skipif(not DATA_DIR.is_dir(), reason="offline benchmark data missing")


def comparable(results: Path) -> dict[str, Any]:
    """results.json without what differs between any two runs: when, how long, the command."""
    document = json.loads((results / "results.json").read_text())
    document.pop("created")
    document["settings"].pop("command")
    for entry in document["benchmarks"].values():
        entry.pop("seconds")
    return document


def samples(results: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((results / "samples").iterdir())}


def untimed(value: Any) -> Any:
    """A sample record without its wall-clock fields (a code sample's `seconds` per test)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def records(results: Path) -> dict[str, list[Any]]:
    return {name: [untimed(json.loads(line)) for line in text.splitlines()]
            for name, text in samples(results).items()}  # fmt: skip


def assert_same_run(local: Path, sharded: Path) -> None:
    assert comparable(sharded) == comparable(local)
    # Every sample's record as the local run wrote it, in its order; only timings differ.
    assert records(sharded) == records(local)


def humaneval_solutions(count: int) -> list[dict[str, Any]]:
    """The first problems' canonical solutions, and a wrong one for every third."""
    with gzip.open(DATA_DIR / "humaneval" / "HumanEval.jsonl.gz", "rt") as rows:
        problems = [json.loads(line) for line, _ in zip(rows, range(count), strict=False)]
    return [{"benchmark": "humaneval", "id": p["task_id"],
             "output": "```python\n" + p["prompt"] + (p["canonical_solution"] if i % 3 else
                                                       "    return None\n") + "```"}
            for i, p in enumerate(problems)]  # fmt: skip


def predictions_file(path: Path) -> Path:
    lines: list[dict[str, Any]] = [
        {"benchmark": "gsm8k", "id": str(i), "output": f"So the answer is {i * 7}."}
        for i in range(11)
    ]
    lines += humaneval_solutions(6)
    lines += [{"benchmark": "rg_math", "id": f"complex_arithmetic/{i}",
               "output": f"<answer>{i}</answer>"} for i in range(5)]  # fmt: skip
    from spade.suites import load_suite

    heldout = load_suite(SPLIT_SUITE, root=ROOT / "envs_snapshots").envs_in("heldout")
    ids = [f"{env.id}/{seed}" for env in heldout[:3] for seed in env.entry.eval_seeds[:2]]
    solved = solution_predictions(ids, HELDOUT, SPLIT_SUITE)
    solved[1]["output"] = solved[1]["output"][:-1]  # one play stops short of solving
    lines += solved
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def spade_eval(*args: str) -> int:
    try:
        return main(list(args))
    except SystemExit as exc:  # one_line_errors exits with the status
        return int(exc.code or 0)


@needs_data
def test_sharded_predictions_equal_the_local_run(ray_head: RayHead, tmp_path: Path) -> None:
    saved = predictions_file(tmp_path / "predictions.jsonl")
    common = ["--predictions", str(saved), "--data-dir", str(DATA_DIR),
              "--sandbox", "bwrap"]  # fmt: skip
    assert spade_eval(*common, "--output", str(tmp_path / "local")) == 0
    assert spade_eval(*common, "--output", str(tmp_path / "ray"), "--ray", ray_head.address,
                      "--ray-workers", str(CPUS)) == 0  # fmt: skip
    assert_same_run(tmp_path / "local", tmp_path / "ray")
    benchmarks = comparable(tmp_path / "ray")["benchmarks"]
    assert {name: entry["n"] for name, entry in benchmarks.items()} == {
        "gsm8k": 11, "humaneval": 6, "rg_math": 5, HELDOUT: 6}  # fmt: skip
    assert 0 < benchmarks["humaneval"]["metrics"]["pass@1"]["value"] < 1
    assert 0 < benchmarks[HELDOUT]["metrics"]["success"]["value"] < 1


def one_line_failure(capsys: pytest.CaptureFixture[str], output: Path, *args: str) -> str:
    assert spade_eval(*args, "--output", str(output)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert not (output / "results.json").exists()
    return err.strip().splitlines()[-1]


def test_an_unreachable_address_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "p.jsonl"
    saved.write_text(json.dumps({"benchmark": "gsm8k", "id": "0", "output": "4"}) + "\n")
    nowhere = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    line = one_line_failure(capsys, tmp_path / "out", "--predictions", str(saved),
                            "--ray", nowhere)  # fmt: skip
    assert line == (
        f"error: spade-eval: cannot reach a Ray cluster at {nowhere} (Connection refused); start "
        "one with `ray start --head` or give its HOST:PORT"
    )
    assert time.monotonic() - started < 30  # not Ray's minutes of retrying


def test_a_driver_without_the_clusters_token_is_one_line(ray_head: RayHead, tmp_path: Path) -> None:
    saved = tmp_path / "p.jsonl"
    saved.write_text(json.dumps({"benchmark": "gsm8k", "id": "0", "output": "4"}) + "\n")
    # Another user's shell: no RAY_AUTH_* variables and no ~/.ray/auth_token.
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env["HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "spade.cli.eval", "--predictions", str(saved), "--ray",
         ray_head.address, "--output", str(tmp_path / "out")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: spade-eval: the Ray cluster at {ray_head.address} refused this process's "
        "authentication token (RAY_AUTH_MODE is unset): export RAY_AUTH_MODE=token and the "
        "cluster's token (`ray get-auth-token` on its head) as RAY_AUTH_TOKEN, or in "
        "~/.ray/auth_token"
    ]
    # One line: not ray.init's ~20 s of retries, each logged by Ray's C++ client.
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--ray-workers", str(CPUS + 1)],
         f"--ray-workers {CPUS + 1}: {CPUS + 1} workers x 1 CPU need {CPUS + 1} CPUs"),
        (["--ray-workers", "1", "--ray-gpus-per-worker", "1"],
         "--ray-workers 1 --ray-gpus-per-worker 1: 1 workers x 1 GPU need 1 GPUs"),
    ],
)  # fmt: skip
def test_a_cluster_without_the_resources_is_one_line(
    ray_head: RayHead, tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str],
    message: str,
) -> None:  # fmt: skip
    saved = tmp_path / "p.jsonl"
    saved.write_text(json.dumps({"benchmark": "gsm8k", "id": "0", "output": "4"}) + "\n")
    line = one_line_failure(capsys, tmp_path / "out", "--predictions", str(saved),
                            "--ray", ray_head.address, *flags)  # fmt: skip
    assert line == (
        f"error: spade-eval: {message}; the cluster at {ray_head.address} has "
        f"{'0' if 'GPU' in message else CPUS} ({CPUS} CPUs, 0 GPUs on 1 node)"
    )


# -- a tiny live model (slow: each worker loads torch and the model) --------------------------
LIVE = ["--benchmarks", "games,humaneval", "--limit", "4", "--batch-size", "2",
        "--sandbox", "bwrap"]  # fmt: skip


def cache_rows(cache: Path) -> dict[str, bytes]:
    with sqlite3.connect(cache / "completions.sqlite") as db:
        return dict(db.execute("SELECT key, completion FROM completions_v2").fetchall())


@pytest.mark.slow
@needs_data
def test_a_live_model_sharded_equals_the_local_run_and_shares_its_cache(
    ray_head: RayHead, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    common = ["--checkpoint", str(tiny_model_dir), "--data-dir", str(DATA_DIR), *LIVE]
    monkeypatch.setenv("SPADE_CACHE_DIR", str(tmp_path / "local-cache"))
    assert spade_eval(*common, "--output", str(tmp_path / "local")) == 0
    # Generated afresh on the workers (their own cache): the same completions, the same keys.
    monkeypatch.setenv("SPADE_CACHE_DIR", str(tmp_path / "ray-cache"))
    ray_run = [*common, "--ray", ray_head.address, "--ray-workers", str(CPUS)]
    assert spade_eval(*ray_run, "--output", str(tmp_path / "ray")) == 0
    assert_same_run(tmp_path / "local", tmp_path / "ray")
    local_rows = cache_rows(tmp_path / "local-cache")
    assert cache_rows(tmp_path / "ray-cache") == local_rows and local_rows
    # The workers consult the cache too: an entry changed there shows in the sharded run.
    key = next(iter(local_rows))
    changed = json.loads(local_rows[key]) | {"text": "cached, not generated"}
    with sqlite3.connect(tmp_path / "ray-cache" / "completions.sqlite") as db:
        db.execute("UPDATE completions_v2 SET completion = ? WHERE key = ?",
                   (json.dumps(changed).encode(), key))  # fmt: skip
    assert spade_eval(*ray_run, "--output", str(tmp_path / "again")) == 0
    lines = [line for text in samples(tmp_path / "again").values()
             for line in text.decode().splitlines()]  # fmt: skip
    assert sum("cached, not generated" in line for line in lines) == 1


def worker_pids(ray_head: RayHead, title: str) -> list[int]:
    """This cluster's worker processes whose title (Ray names them `ray::Class.method`) is
    `title`."""
    found = []
    for pid in ray_head.processes():
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        except OSError:
            continue
        if command.startswith(title):
            found.append(pid)
    return found


@pytest.mark.slow
@needs_data
def test_a_worker_killed_mid_run_is_replaced_and_the_run_completes(
    ray_head: RayHead, tiny_model_dir: Path, tmp_path: Path, fresh_cache: Path
) -> None:
    command = [sys.executable, "-m", "spade.cli.eval", "--checkpoint", str(tiny_model_dir),
               "--data-dir", str(DATA_DIR), *LIVE, "--no-cache"]  # fmt: skip
    local = subprocess.run([*command, "--output", str(tmp_path / "local")], cwd=ROOT,
                           capture_output=True, text=True, timeout=1800)  # fmt: skip
    assert local.returncode == 0, local.stderr
    log = tmp_path / "ray.log"
    with log.open("w") as stderr:
        sharded = subprocess.Popen(
            [*command, "--output", str(tmp_path / "ray"), "--ray", ray_head.address,
             "--ray-workers", str(CPUS)], cwd=ROOT, stderr=stderr,
        )  # fmt: skip
    deadline = time.monotonic() + 1200
    while not (running := worker_pids(ray_head, "ray::ShardWorker.run")):
        assert sharded.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    os.kill(running[0], signal.SIGKILL)
    assert sharded.wait(timeout=1800) == 0, log.read_text()
    err = log.read_text()
    assert "its Ray worker died; running it once more on a restarted worker" in err
    assert_same_run(tmp_path / "local", tmp_path / "ray")
