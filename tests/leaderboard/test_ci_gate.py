"""`.ci/run`'s gate, exactly as configured there: what its stored row and slices can see, and
on the real embedded model (completions replayed, `ci_replay.py`) that an unchanged checkout
passes it and a planted regression fails it.

The planted regression breaks the code benchmarks' answer extractor the way a careless edit
would: an off-by-one leaves each fenced code block without its last line (often the
`return`). It is planted into the spade-eval process only, through a `sitecustomize` on
PYTHONPATH (the sandbox's workers start with a cleared environment and `-S`); the programs
still run in the sandbox, so the scores it moves are real.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from spade.evals.presets import load_presets, preset_sizes
from spade.leaderboard import Leaderboard, Row, compare
from tests.leaderboard.ci_replay import (
    COMPLETIONS,
    ROOT,
    cache_dir_for,
    cached_completions,
    flag,
    gate_command,
    import_completions,
    replay_command,
)

DROP = 0.15
"""The drop the drop check must see on the slices sized for it."""
DROP_SIZED = ("humaneval", "mbpp")
"""The benchmarks whose ci slice is sized for the drop check (16 samples). The others keep 2
samples, where it passes the loss of 1 of 2 answers: there the reproduction check is the gate."""
CODE = ("humaneval", "mbpp")
"""The benchmarks whose extractor the planted regression breaks."""

PLANTED = """
import sys

import spade.evals.code_extract as code_extract

_original = code_extract.fenced_blocks
print("planted: code blocks lose their last line", file=sys.stderr, flush=True)


def _without_last_line(text):
    return ["".join(block.splitlines(keepends=True)[:-1]) for block in _original(text)]


code_extract.fenced_blocks = _without_last_line
"""


def stored_row() -> Row:
    argv = gate_command()
    return Leaderboard.load(ROOT / flag(argv, "--compare")).row(flag(argv, "--label"))


def test_the_gate_generates_afresh_on_the_ci_preset() -> None:
    argv = gate_command()
    assert flag(argv, "--preset") == "ci"
    # A cached completion would hide a change in how the model generates.
    assert "--no-cache" in argv


def test_the_stored_row_is_a_greedy_run_of_the_ci_preset_with_every_digest() -> None:
    row = stored_row()
    sizes = preset_sizes("ci")
    assert list(row.benchmarks) == load_presets()["ci"] == list(sizes)
    assert row.settings["preset"] == "ci" and row.checkpoint["weights_sha256"]
    for name, score in row.benchmarks.items():
        assert score.n == sizes[name] and score.greedy, name
        ids = set(row.samples[name])
        assert len(ids) == score.n and set(row.outputs[name]) == set(row.answers[name]) == ids


def smallest_visible_drop(n: int) -> int:
    """The fewest samples of `n` whose change from right to wrong is at least DROP."""
    return math.ceil(DROP * n - 1e-9)


def dropped(scores: dict[str, float], count: int) -> dict[str, float]:
    right = [sample_id for sample_id, score in scores.items() if score == 1.0]
    return {**scores, **dict.fromkeys(right[:count], 0.0)}


def test_the_reproduction_check_applies_to_every_benchmark_of_the_gate() -> None:
    stored = stored_row()
    for result in compare(stored, stored):
        reproduction = result.reproduction
        assert reproduction is not None and reproduction.checked, result.lines()
        assert reproduction.compared == stored.benchmarks[result.benchmark].n
        assert not result.failed, result.lines()


@pytest.mark.parametrize("name", DROP_SIZED)
def test_the_drop_check_sees_a_drop_of_015_on_the_sized_slices(name: str) -> None:
    stored = stored_row()
    scores = stored.samples[name]
    count = smallest_visible_drop(len(scores))
    # A drop of DROP needs that many right answers; where the model has fewer, lend it some
    # on the same ids (the slice size, not the model's luck, decides what the gate sees).
    wrong = [sample_id for sample_id, score in scores.items() if score == 0.0]
    missing = max(0, count - sum(score == 1.0 for score in scores.values()))
    base = {**scores, **dict.fromkeys(wrong[:missing], 1.0)}
    reference = replace(stored, samples={**stored.samples, name: base})
    # Another weights hash: only the statistical check applies, as for any other model.
    checkpoint = {**stored.checkpoint, "weights_sha256": "0" * 64}
    current = replace(reference, checkpoint=checkpoint, samples={name: dropped(base, count)})
    (result,) = (r for r in compare(current, reference) if r.benchmark == name)
    assert result.delta == pytest.approx(-count / len(scores))
    assert result.dropped, result.reason
    # One right answer fewer lost is a drop below DROP, and on this slice within the noise.
    fewer = replace(current, samples={name: dropped(base, count - 1)})
    (result,) = (r for r in compare(fewer, reference) if r.benchmark == name)
    assert -result.delta < DROP and not result.dropped, result.reason


def spade_eval(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # A replay generates nothing; if the recorded completions no longer match the prompts it
    # would generate every sample (tens of minutes), so it is stopped long before that.
    try:
        result = subprocess.run(
            argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the replay generated: {COMPLETIONS.name} is stale; {RERECORD}")
    sys.stdout.write(result.stdout)  # shown by pytest when the test fails
    return result


RERECORD = "re-record with `.venv/bin/python -m tests.leaderboard.ci_replay record`"


def verdict(stdout: str) -> str:
    return next(line for line in reversed(stdout.splitlines()) if line.startswith("gate: "))


def gate_lines(stdout: str, name: str) -> list[str]:
    """The drop-check line of benchmark `name` and the indented reproduction lines below it."""
    lines = stdout.splitlines()
    gate = next(i for i, line in enumerate(lines) if line.startswith("Regression gate against"))
    start = next(i for i in range(gate, len(lines)) if lines[i].split(":")[0].endswith(f" {name}"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), None)
    return lines[start:end]


@pytest.mark.slow
def test_ci_gate_passes_an_unchanged_run_and_fails_a_planted_regression(tmp_path: Path) -> None:
    argv = gate_command()
    stored = stored_row()
    cache_dir = cache_dir_for(tmp_path / "cache", flag(argv, "--checkpoint"))
    recorded = import_completions(cache_dir)
    env = {**os.environ, "SPADE_CACHE_DIR": str(cache_dir)}

    honest = spade_eval(replay_command(argv, tmp_path / "honest"), env)
    assert honest.returncode == 0, honest.stderr[-3000:]
    assert verdict(honest.stdout) == "gate: passed"
    for name, score in stored.benchmarks.items():
        lines = gate_lines(honest.stdout, name)
        assert lines[0].startswith(f"ok {name}: +0.000"), lines
        assert lines[1].startswith(f"  reproduction ok: all {score.n} samples reproduced"), lines
    assert cached_completions(cache_dir) == recorded, f"the replay generated: {RERECORD}"
    # The critical path: every benchmark of the ci preset but `games` is one call a sample, and
    # a game's sample records one reply per call, so the longest chain has as many turns as the
    # longest game (at least one); it is a game's where a game took more than one turn. (The
    # recorded ci games each end after one move, so today every chain is one call long.)
    longest = json.loads((tmp_path / "honest" / "results.json").read_text())["critical_path"]
    games = (tmp_path / "honest" / "samples" / "games.jsonl").read_text().splitlines()
    most = max(1, *(len(json.loads(line)["output"]) for line in games))
    assert longest["longest"]["turns"] == most, longest
    if most > 1:
        assert longest["longest"]["benchmark"] == "games", longest
    shown = f"critical path: {most} dependent turns in {longest['longest']['benchmark']} ("
    assert shown in honest.stdout

    plant = tmp_path / "plant"
    plant.mkdir()
    (plant / "sitecustomize.py").write_text(PLANTED, encoding="utf-8")
    pythonpath = os.pathsep.join(p for p in (str(plant), env.get("PYTHONPATH")) if p)
    planted_env = {**env, "PYTHONPATH": pythonpath}
    planted = spade_eval(replay_command(argv, tmp_path / "planted"), planted_env)
    assert "planted: code blocks lose their last line" in planted.stderr
    assert planted.returncode == 1, planted.stderr[-3000:]
    # The code benchmarks fail, and only they: their extracted answers moved though no output
    # did (the reproduction check), and answers that passed now fail in the sandbox.
    failed = verdict(planted.stdout).removeprefix("gate: FAILED (").removesuffix(")")
    verdicts = dict(part.split(": ", 1) for part in failed.split("; "))
    assert set(verdicts) == set(CODE), failed
    for name in CODE:
        lines = gate_lines(planted.stdout, name)
        assert lines[1].startswith("  reproduction FAILED: "), lines
        assert all("same output, answer changed" in line for line in lines[2:]), lines
        lowered = sum(": score 1 → 0," in line for line in lines[2:])
        raised = sum(": score 0 → 1," in line for line in lines[2:])
        # Only right answers can be lowered: where the stored row has some, the plant must
        # lower one; where it only lowers, and as many as a drop of DROP takes on this slice,
        # the drop check fails too.
        if stored.benchmarks[name].value > 0:
            assert lowered > 0, lines
        visible = lowered >= smallest_visible_drop(stored.benchmarks[name].n)
        if name in DROP_SIZED and not raised and visible:
            assert "dropped" in verdicts[name], failed
    # Without a right code answer in the stored row the plant could move no score, and this
    # test would show only the reproduction check.
    assert any(stored.benchmarks[name].value > 0 for name in CODE), "no right code answer stored"
    assert cached_completions(cache_dir) == recorded  # answers changed, generations did not
