"""Real directories to render: spade-eval results scored from saved predictions, and a
spade-train run dir written through the run's own writers (RunLog, EnvMemory, dump_config).

The results come from the real CLI (`spade-eval --predictions`): a frozen-suite replay and a
games replay (multi-turn, so transcripts exist) and GSM8K outputs, some of them hostile
markup. The run dir's records have the shapes the loop writes; a real (slow) training run is
made in test_real_run.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spade.selfplay.config import dump_config, load_config
from spade.selfplay.memory import EnvMemory, MemoryEntry, new_entry_id
from spade.selfplay.run_log import RunLog
from spade.suites import load_suite
from tests.data import DATA_DIR
from tests.viewer.browser import Browser, find_chromium

ROOT = Path(__file__).resolve().parents[2]
SUITE = "suite:spade-seed@1.0.0"
XSS = "<script>alert(1)</script>"
XSS_MARK = '<img src=x onerror="window.__spade_xss = 1">'
"""An `onerror` handler sets a flag: if it ever ran, the page rendered markup from data."""
HOSTILE = f"{XSS} {XSS_MARK} </script><!-- \\boxed{{1}}"


def suite_ids(count: int) -> list[tuple[str, Any]]:
    """The first `count` envs of the seed suite at their first evaluation seed, with each
    env's reference solution for that seed."""
    suite = load_suite("spade-seed@1.0.0", root=ROOT / "envs_snapshots")
    chosen = []
    for env in suite.envs[:count]:
        seed = env.entry.eval_seeds[0]
        with env.remote() as remote:
            remote.reset(seed)
            chosen.append((f"{env.id}/{seed}", remote.solution()))
    return chosen


def spade_eval(lines: list[dict[str, Any]], out: Path, *extra: str) -> Path:
    predictions = out.with_suffix(".predictions.jsonl")
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    command = [sys.executable, "-m", "spade.cli.eval", "--predictions", str(predictions),
               "--output", str(out), *extra]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return out


@pytest.fixture(scope="session")
def suite_solutions() -> list[tuple[str, Any]]:
    return suite_ids(4)


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory: pytest.TempPathFactory, suite_solutions: list) -> Path:
    """Suite: envs 0, 2, 3 solved, env 1 answered with hostile markup; games: a tictactoe game
    that ends on an illegal move; GSM8K (with the offline data): right, hostile, unparsable."""
    lines: list[dict[str, Any]] = []
    for index, (sample_id, solution) in enumerate(suite_solutions):
        output = [f"\\boxed{{{HOSTILE}}}"] if index == 1 else solution
        lines.append({"benchmark": SUITE, "id": sample_id, "output": output})
    lines.append({"benchmark": "games", "id": "tictactoe/random/0",
                  "output": ["[4]", "[0]", "[8]", "[2]", "[6]"]})  # fmt: skip
    extra: list[str] = []
    if DATA_DIR.is_dir():
        outputs = ["The final answer is 18", f"{HOSTILE} The final answer is 3", "no idea"]
        lines += [{"benchmark": "gsm8k", "id": str(i), "output": o} for i, o in enumerate(outputs)]
        extra = ["--data-dir", str(DATA_DIR)]
    return spade_eval(lines, tmp_path_factory.mktemp("results") / "here", *extra)


@pytest.fixture(scope="session")
def other_results_dir(tmp_path_factory: pytest.TempPathFactory, suite_solutions: list) -> Path:
    """The same suite samples, but env 0 fails (down from here's view) and env 1 is solved
    (up); envs 2 and 3 unchanged."""
    lines = []
    for index, (sample_id, solution) in enumerate(suite_solutions):
        output = ["\\boxed{nonsense}"] if index == 0 else solution
        lines.append({"benchmark": SUITE, "id": sample_id, "output": output})
    return spade_eval(lines, tmp_path_factory.mktemp("results") / "other")


ENV_CODE = '''import random


class ScriptEnv:
    """Guess the hidden number. Its text says </script><script>alert(1)</script>."""

    metadata = {"kind": "game", "skill": "search", "difficulty": "easy"}

    def reset(self, seed=None):
        self.secret = random.Random(seed).randint(1, 8)
        return "Guess 1..8 as \\\\boxed{N}.", {}

    def step(self, action):
        won = action.strip() == f"\\\\boxed{{{self.secret}}}"
        return ("yes" if won else "no"), float(won), won, False, {}

    def solution(self):
        return [f"\\\\boxed{{{self.secret}}}"]

    def close(self):
        pass
'''
HINT = "Halve the range of possible values with every guess."


def _metrics(step: int, validity: float, win_rate: float, regret: float) -> dict[str, Any]:
    """An iteration's metrics with the keys the loop writes (iteration_metrics)."""
    return {
        "designer/candidates": 2, "designer/valid": int(2 * validity),
        "designer/validity_rate": validity, "designer/attempts": 1.5,
        "designer/failures": {} if validity == 1 else {"near_duplicate": 1},
        "envs/played": 2, "envs/win_rate": win_rate, "envs/regret": regret,
        "agent/return": win_rate, "agent/progress": win_rate + 0.1, "agent/truncated": 0.25,
        "agent/episodes": 8, "samples/agent": 16, "samples/designer": 2,
        "update/loss": 0.1 / (step + 1), "update/grad_norm": 0.05, "update/optimizer_steps": 1.0,
        "time/designer_generation": 12.0, "time/validation": 0.4, "time/rollouts": 30.0,
        "time/update": 9.0, "time/total": 52.0 + step, "time/sandbox_fraction": 0.02,
    }  # fmt: skip


def episode(step: int, env: str, seed: int, hinted: bool, won: bool) -> dict[str, Any]:
    guesses = ["\\boxed{4}", "\\boxed{6}"] if won else ["\\boxed{4}", "\\boxed{2}"]
    transcript: list[dict[str, Any]] = [
        {"role": "system", "content": "You are playing an interactive environment."
                                      + (f" Hint: {HINT}" if hinted else "")},
        {"role": "user", "content": "Guess 1..8 as \\boxed{N}."},
        {"role": "assistant", "content": guesses[0]}, {"role": "user", "content": "higher"},
        {"role": "assistant", "content": guesses[1]},
        {"role": "user", "content": "yes" if won else f"no {XSS}"},
    ]  # fmt: skip
    rewards = [0.5, 1.0 if won else 0.5]
    return {"step": step, "env": env, "seed": seed, "hinted": hinted, "transcript": transcript,
            "rewards": rewards, "return": rewards[-1] if won else 0.0, "terminated": won,
            "truncated": not won, "hint": HINT if hinted else None}  # fmt: skip


def write_run_dir(path: Path, episodes: bool = True) -> Path:
    """Three iterations: both designs accepted at step 0, one rejected at step 1 (a near
    duplicate), one with no code and one failing a check at step 2."""
    path.mkdir(parents=True)
    (path / "config.yaml").write_text(dump_config(load_config(None, {"iterations": 3})))
    log = RunLog(path)
    base = {"kind": "game", "skill": "search", "difficulty": "easy", "attempts": 1}
    designs = {
        0: [{**base, "group": "design/0", "document_id": "doc-a", "valid": True, "failure": None,
             "reply": f"Here it is.\n```python\n{ENV_CODE}```", "hint": HINT},
            {**base, "group": "design/0", "document_id": "doc-a", "valid": True, "failure": None,
             "reply": f"```python\n{ENV_CODE.replace('ScriptEnv', 'OtherEnv')}```",
             "hint": HINT}],
        1: [{**base, "group": "design/1", "document_id": "doc-b", "valid": False,
             "failure": f"near_duplicate: duplicate of {new_entry_id(0, 0)} (same code)",
             "reply": f"```python\n{ENV_CODE}```", "hint": None, "attempts": 2,
             "first_reply": "```python\nclass FirstTryEnv(\n```",
             "first_failure": "syntax_error: line 1: '(' was never closed"}],
        2: [{**base, "group": "design/2", "document_id": "doc-c", "valid": False,
             "failure": "no_code: the reply holds no ```python code block",
             "reply": f"I cannot write that. {XSS}", "hint": None},
            {**base, "group": "design/2", "document_id": "doc-c", "valid": False,
             "failure": "step_types: step returned a list, expected a 5-tuple",
             "reply": f"```python\n{ENV_CODE.replace('ScriptEnv', 'BrokenEnv')}```",
             "hint": None}],
    }  # fmt: skip
    curve = [(1.0, 0.25, 0.25), (0.5, 0.5, 0.125), (0.0, 0.75, 0.0)]
    for step, (validity, win_rate, regret) in enumerate(curve):
        log.write(step, _metrics(step, validity, win_rate, regret))
        log.write_designs(step, designs[step])
    log.close()
    memory = EnvMemory()
    for serial, name in enumerate(["ScriptEnv", "OtherEnv"]):
        memory.add(MemoryEntry(
            id=new_entry_id(0, serial), source=ENV_CODE.replace("ScriptEnv", name), kind="game",
            skill="search", difficulty="easy", document_id="doc-a", win_rate=0.25 + serial / 2,
            regret=0.25 - serial / 8, step=0, hint=HINT, created_step=0,
        ))  # fmt: skip
    memory.save(path)
    if episodes:
        records = [
            episode(0, new_entry_id(0, 0), 7, hinted, won=hinted) for hinted in (False, True)
        ]
        (path / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run_dir(tmp_path_factory.mktemp("runs") / "run")


@pytest.fixture(scope="session")
def chromium() -> str:
    found = find_chromium()
    if found is None:
        pytest.skip("headless Chromium not found: `apt-get install chromium` (install.sh does "
                    "this when run as root)")  # fmt: skip
    return found


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Browser]:
    opened = Browser(chromium)
    yield opened
    opened.close()
