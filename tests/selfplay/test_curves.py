"""`spade-train curves`: two runs' metrics on one figure, and bad input in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from spade.selfplay.run_log import CURVES, RunLog, curves_figure
from spade.selfplay.run_summary import summarize, summary_table


def fake_run(run_dir: Path, success: list[float]) -> Path:
    """A run directory with metrics written by the run's own log (records, no model)."""
    run_dir.mkdir(parents=True)
    log = RunLog(run_dir)
    for step, rate in enumerate(success, start=1):
        log.write(step, {"envs/win_rate": rate, "update/optimizer_steps": 1.0})
    log.close()
    return run_dir


def curves(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spade.cli.train", "curves", *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_two_runs_share_each_panel_one_line_each(tmp_path: Path) -> None:
    spade = fake_run(tmp_path / "spade", [0.0, 0.25, 0.5])
    fixed = fake_run(tmp_path / "fixed", [0.0, 0.0])
    out = tmp_path / "both.png"
    result = curves(str(spade), str(fixed), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "curves: " in result.stdout and "spade, fixed" in result.stdout
    assert Image.open(out).size[0] > 0
    # The same figure in process: one line per run in a panel both runs have data for.
    figure = curves_figure({"spade": RunLog(spade).records(), "fixed": RunLog(fixed).records()})
    panels = {axis.get_title(): axis for axis in figure.axes}
    assert set(panels) == {title for _, title in CURVES}
    win = panels["agent success rate (no hint)"]
    assert [line.get_label() for line in win.get_lines()] == ["spade", "fixed"]
    assert list(win.get_lines()[0].get_ydata()) == [0.0, 0.25, 0.5]
    assert not panels["designer validity rate"].get_lines()  # no run logged it


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: [str(tmp / "missing")], "no metrics.jsonl records"),
        (
            lambda tmp: [
                str(fake_run(tmp / "a" / "run", [0.1])),
                str(fake_run(tmp / "b" / "run", [0.2])),
            ],
            "share a folder name",
        ),
    ],
)
def test_bad_runs_are_one_line_errors(tmp_path: Path, make: object, message: str) -> None:
    out = tmp_path / "out.png"
    result = curves(*make(tmp_path), "--out", str(out))  # type: ignore[operator]
    assert result.returncode != 0 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()


def test_an_out_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    run = fake_run(tmp_path / "spade", [0.1])
    result = curves(str(run), "--out", str(tmp_path))
    assert result.returncode != 0 and "is a directory; give a file name" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_role_without_samples_plots_zero_samples_with_gradient(tmp_path: Path) -> None:
    # The update reports nothing for a role that had no samples (SPADE with no valid design,
    # whose designer is then untrained): the panel shows 0 there, not a gap.
    records = [
        {"step": 0, "samples/designer": 0, "samples/agent": 4, "update/agent/with_gradient": 2.0},
        {"step": 1, "samples/designer": 3, "update/designer/with_gradient": 3.0},
        {"step": 2},  # a record that says nothing of the designer (an older run's)
    ]
    panels = {axis.get_title(): axis for axis in curves_figure({"spade": records}).axes}
    [line] = panels["designer samples with gradient"].get_lines()
    assert list(line.get_xdata()) == [0, 1] and list(line.get_ydata()) == [0.0, 3.0]
    [line] = panels["agent samples with gradient"].get_lines()
    assert list(line.get_ydata()) == [2.0]


def test_the_summary_counts_what_each_iteration_updated(tmp_path: Path) -> None:
    # A SPADE run: iteration 1 has no update at all (no design valid, every play capped),
    # iteration 2 trains both roles, iteration 3 the agent only.
    spade = [
        {"step": 1, "designer/candidates": 4, "designer/valid": 0, "samples/designer": 0,
         "samples/agent": 0, "update/optimizer_steps": 0, "envs/regret": 0.0,
         "agent/return": 0.05, "agent/truncated": 1.0, "time/total": 300.0},
        {"step": 2, "designer/candidates": 4, "designer/valid": 2, "samples/designer": 4,
         "update/designer/with_gradient": 4.0, "update/agent/with_gradient": 6.0,
         "update/optimizer_steps": 2, "envs/regret": 0.25, "agent/return": 0.1,
         "agent/truncated": 0.5, "update/mismatch/logprob_abs_diff_mean": 0.02,
         "time/total": 420.0},
        {"step": 3, "designer/candidates": 4, "designer/valid": 1, "samples/designer": 0,
         "update/agent/with_gradient": 2.0, "update/optimizer_steps": 1,
         "envs/regret": -0.125, "agent/return": 0.2, "agent/truncated": 0.0,
         "update/mismatch/logprob_abs_diff_mean": 0.01, "time/total": 360.0},
    ]  # fmt: skip
    s = summarize(spade)
    assert (s.iterations, s.with_optimizer_step) == (3, 2)
    assert (s.agent_gradient_samples, s.agent_gradient_iterations) == (8, 2)
    assert (s.designer_gradient_samples, s.designer_gradient_iterations) == (4, 1)
    assert (s.valid_designs, s.candidates) == (3, 12)
    assert s.regret_nonzero == 2 and s.regret_range == (-0.125, 0.25)
    assert s.return_first_last == (0.05, 0.2) and s.truncated_mean == 0.5
    assert s.mismatch_range == (0.01, 0.02) and s.seconds_range == (300.0, 420.0)
    # A fixed run designs nothing: its designer columns say so instead of reading 0.
    fixed = summarize([{"step": 1, "update/optimizer_steps": 1, "update/agent/with_gradient": 3.0}])
    assert fixed.designer_gradient_iterations is None and fixed.candidates is None
    table = summary_table({"spade": spade, "fixed": spade[1:2]}).splitlines()
    assert len(table) == 4 and table[0].startswith("| run")
    assert "| 4 in 1 of 3 " in table[2] and "| 3 of 12 " in table[2]


def test_the_curves_command_prints_the_summary_under_the_figure(tmp_path: Path) -> None:
    spade = fake_run(tmp_path / "spade", [0.0, 0.25, 0.5])
    result = curves(str(spade), "--out", str(tmp_path / "one.png"))
    assert result.returncode == 0, result.stderr
    [row] = [line for line in result.stdout.splitlines() if line.startswith("| spade")]
    assert "| 3 of 3 " in row  # three iterations, each with an optimizer step
