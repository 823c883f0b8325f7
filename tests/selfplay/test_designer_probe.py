"""`spade-train designer-probe`: the loop's designer step, counted, on the real sandbox.

The counting tests script the designer's replies (a valid env, a reply without code), since a
model that writes valid envs does not run on this CPU in test time; the checks, the
near-duplicate guard and the hint leak check are the real ones. The CLI test runs a real
(tiny) model end to end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from spade.envs.scaffold import PRELUDE
from spade.models.policy import Completion
from spade.rollout import GenRequest
from spade.sandbox import SandboxConfig
from spade.selfplay.config import load_config
from spade.selfplay.designer import CONTRACT, SCAFFOLD_CONTRACT
from spade.selfplay.designer_probe import ProbeResult, failure_kind, probe_designer, write_designs
from tests.envs.test_scaffold import DESIGN as PATH_DESIGN
from tests.replies import completion
from tests.selfplay.test_loop import HINT, LENGTH_ENV

CONFIG = {
    "designer.designs_per_iteration": 2,
    "designer.group_size": 2,
    "designer.repair_attempts": 1,
    "no_corpus": True,
}


def scripted(requests: Sequence[GenRequest]) -> list[list[Completion]]:
    """Each design request: one valid env and one reply without code; repairs stay broken."""
    answers = []
    for request in requests:
        if request.phase == "hint":
            answers.append([completion(HINT)] * request.n)
        elif request.sample_id.endswith("/repair"):
            answers.append([completion("Still no code, sorry.")])
        else:
            texts = [f"```python\n{LENGTH_ENV}```", "I would write an env about cells."]
            answers.append([completion(t) for t in texts[: request.n]])
    return answers


def test_the_probe_counts_valid_designs_and_names_the_failures(tmp_path: Path) -> None:
    config = load_config(None, CONFIG)
    result = probe_designer(config, scripted, None, [], [], SandboxConfig(), rounds=2)
    # Two rounds of two prompts of two replies. Within a round the second valid LengthEnv
    # repeats the first one accepted, as in a training iteration (a new round starts afresh),
    # and every failed reply gets its repair, which the script leaves without code.
    assert len(result.candidates) == 8
    assert result.valid == 2 and result.validity == 0.25
    assert result.failures() == {"no_code": 6}
    assert all(c.attempts == 2 for c in result.candidates if not c.valid)
    # What the designer itself wrote, before the repairs replaced it: the prose replies and
    # the repeated LengthEnv; the last replies are the repairs' (no code).
    assert result.first_failures() == {"no_code": 4, "near_duplicate": 2}
    summary = result.summary()
    assert summary["candidates"] == 8 and summary["valid"] == 2 and summary["cut_off"] == 0
    out = write_designs(tmp_path / "designs.jsonl", result)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["valid"] for r in records].count(True) == 2
    assert all(r["hint"] == HINT for r in records if r["valid"])
    repeated = [r for r in records if (r["first_failure"] or "").startswith("near_duplicate")]
    assert len(repeated) == 2 and all("LengthEnv" in r["first_reply"] for r in repeated)
    assert all(r["first_reply"] is None for r in records if r["valid"])


def test_each_finished_round_is_handed_on_so_a_stopped_probe_keeps_it(tmp_path: Path) -> None:
    config = load_config(None, CONFIG)
    seen: list[int] = []

    def save(result: ProbeResult) -> None:
        seen.append(len(result.candidates))
        write_designs(tmp_path / "designs.jsonl", result)

    final = probe_designer(config, scripted, None, [], [], SandboxConfig(), rounds=2,
                           after_round=save)  # fmt: skip
    assert seen == [4, 8]  # two prompts of two replies a round
    lines = (tmp_path / "designs.jsonl").read_text().splitlines()
    assert len(lines) == len(final.candidates) == 8


def test_a_design_that_repeats_the_warm_start_data_is_not_counted() -> None:
    config = load_config(None, {**CONFIG, "designer.repair_attempts": 0})
    known = [("known:designer.jsonl:1", LENGTH_ENV.replace("LengthEnv", "WordEnv"))]
    result = probe_designer(config, scripted, None, [], known, SandboxConfig(), rounds=1)
    assert result.valid == 0
    assert result.failures() == {"no_code": 2, "near_duplicate": 2}
    assert all("known:designer.jsonl:1" in (c.failure or "") for c in result.candidates
               if failure_kind(c.failure) == "near_duplicate")  # fmt: skip


def probe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spade.cli.train", "designer-probe", *args],
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def test_the_cli_probes_a_real_model(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "designs.jsonl"
    result = probe("--set", f"model={tiny_model_dir}", "--set", "generation.backend=live",
                   "--set", "designer.max_gen_toks=64",
                   "--set", "designer.designs_per_iteration=1", "--set", "no_corpus=true",
                   "--rounds", "1", "--out", str(out), "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["checkpoint"] == str(tiny_model_dir)
    # A random tiny model writes no env: every candidate failed, each for a named reason.
    assert summary["valid"] == 0 and sum(summary["failures"].values()) == summary["candidates"]
    # ... and ends no reply within 64 tokens.
    assert summary["cut_off"] == summary["candidates"]
    assert len(out.read_text().splitlines()) == summary["candidates"]


def test_bad_probe_input_is_one_line(tmp_path: Path) -> None:
    for args, message in (
        (["--rounds", "0"], "--rounds must be >= 1"),
        (["--set", f"model={tmp_path}"], "config.json"),
        (["--set", "designer.known_designs=/nonexistent.jsonl"], "designer.known_designs"),
    ):
        result = probe(*args)
        assert result.returncode != 0, args
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], result.stderr
        assert "Traceback" not in result.stderr


def test_a_scaffolded_designer_writes_only_the_design() -> None:
    """With `designer.scaffold: text` the prompt asks for a `TextScaffold` subclass, the loop
    validates the reply on the scaffold, the hint prompt shows the design alone, and the
    near-duplicate guard compares designs (every scaffolded env shares the prelude)."""
    seen: list[GenRequest] = []

    def designer(requests: Sequence[GenRequest]) -> list[list[Completion]]:
        seen.extend(requests)
        return [[completion(HINT if r.phase == "hint" else f"```python\n{PATH_DESIGN}```")] * r.n
                for r in requests]  # fmt: skip

    overrides = {**CONFIG, "designer.scaffold": "text", "designer.kinds": ["game", "reasoning"],
                 "designer.designs_per_iteration": 1, "designer.group_size": 1}  # fmt: skip
    config = load_config(None, overrides)
    result = probe_designer(config, designer, None, [], [], SandboxConfig(), rounds=1)
    (candidate,) = result.candidates
    assert candidate.valid, candidate.failure
    assert candidate.code == PRELUDE + PATH_DESIGN
    design_prompt, hint_prompt = seen[0].messages[-1]["content"], seen[-1].messages[-1]["content"]
    assert SCAFFOLD_CONTRACT in design_prompt and CONTRACT not in design_prompt
    assert PATH_DESIGN in hint_prompt and "class TextScaffold" not in hint_prompt
    # The same design in the warm-start data (stored without the prelude) is a repeat.
    known = [("known:designer.jsonl:1", PATH_DESIGN)]
    again = probe_designer(config, designer, None, [], known, SandboxConfig(), rounds=1)
    assert again.failures() == {"near_duplicate": 1}


def test_the_text_scaffold_takes_text_kinds_only() -> None:
    error = subprocess.run(
        [sys.executable, "-m", "spade.cli.train", "designer-probe",
         "--set", "designer.scaffold=text", "--rounds", "1"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert error.returncode != 0
    assert len(error.stderr.strip().splitlines()) == 1, error.stderr
    assert "tool_use" in error.stderr
