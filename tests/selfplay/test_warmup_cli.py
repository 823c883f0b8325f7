"""`spade-train warmup` refuses bad input in one line, before any data is built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def warmup(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spade.cli.train", "warmup", *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (["designer_data.bogus=1"], "designer_data: "),
        (
            ["designer_data.reference_counts=[1, 2]", "sft.epochs=0"],
            "sft: warmup.epochs must be > 0",
        ),
        (["sft.bogus=1"], "sft: "),
        (["agent_episodes_per_env=-1"], "agent_episodes_per_env"),
        (["model=runs/none/sft/model"], "no such model directory"),
        (["designer_data.scaffold=text", "designer_data.cold_start_share=0.5"], "scaffold"),
    ],
)
def test_a_bad_setting_is_one_line_before_anything_runs(
    tmp_path: Path, settings: list[str], message: str
) -> None:
    run_dir = tmp_path / "run"
    result = warmup("--run-dir", str(run_dir), *[a for s in settings for a in ("--set", s)])
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.stderr and not run_dir.exists()


def test_resuming_a_folder_that_is_no_warm_start_is_one_line(tmp_path: Path) -> None:
    result = warmup("--resume", str(tmp_path))
    assert result.returncode != 0 and "not a warm-start run directory" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_hint_examples_limit_the_hints_and_zero_agent_episodes_build_no_play(
    smollm2_tokenizer: Any,
) -> None:
    from spade.selfplay.warmup.run import WarmupConfig, _agent_records, _examples
    from spade.selfplay.warmup.tokens import ExampleTokens

    designs = [{"messages": [{"role": "user", "content": f"Design env {i}."}],
                "reply": f"```python\nclass E{i}Env: pass\n```", "mechanic": "m",
                "hint_messages": [{"role": "user", "content": f"Hint for env {i}?"}],
                "hint_reply": "Bisect."} for i in range(3)]  # fmt: skip
    tokens = ExampleTokens(smollm2_tokenizer)
    kinds = [e.source.split(":")[0] for e in _examples(tokens, [], designs, hints=1)]
    assert kinds == ["designer", "hint", "designer", "designer"]
    assert [e.source.split(":")[0] for e in _examples(tokens, [], designs)].count("hint") == 3
    assert _agent_records(WarmupConfig(agent_episodes_per_env=0), Path("unused")) == []


def test_a_record_with_a_repair_prompt_gives_a_repair_example(smollm2_tokenizer: Any) -> None:
    from spade.selfplay.warmup.run import _examples
    from spade.selfplay.warmup.tokens import ExampleTokens

    reply = "```python\nclass E0Env: pass\n```"
    repair = [
        {"role": "user", "content": "Design env 0."},
        {"role": "assistant", "content": "```python\nclass E0Env: pass("},
        {"role": "user", "content": "The environment failed validation: syntax_error"},
    ]
    design = {"messages": repair[:1], "reply": reply, "mechanic": "m", "hint_reply": None,
              "repair_messages": repair}  # fmt: skip
    designer, fixed = _examples(ExampleTokens(smollm2_tokenizer), [], [design])
    assert (designer.source, fixed.source) == ("designer:m", "repair:m")
    learned = [t for t, m in zip(fixed.input_ids, fixed.loss_mask, strict=True) if m]
    assert smollm2_tokenizer.decode(learned) == f"{reply}<|im_end|>"  # not the broken reply
