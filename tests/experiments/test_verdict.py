"""The verdict and figures: computed from committed artifacts alone, byte for byte again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from spade.cli.experiment import main
from spade.experiments import Experiment, Runner
from spade.experiments.plan import Comparison, load_plan
from spade.experiments.units import units
from spade.experiments.verdict import effect
from spade.experiments.write import write_verdict
from tests.experiments.processes import SAMPLE_IDS, Processes

REPO = Path(__file__).resolve().parents[2]


def better_spade(arm: str, seed: int | None, sample_id: str) -> float:
    """spade solves (seed + 2) of the 8 samples, fixed (seed + 1), warm 1, base 0."""
    solved = {"spade": (seed or 0) + 2, "fixed": (seed or 0) + 1, "warm": 1}.get(arm, 0)
    return float(SAMPLE_IDS.index(sample_id) < solved)


def run_all(plan_path: Path, scorer=better_spade) -> Experiment:  # type: ignore[no-untyped-def]
    Runner(plan_path, launcher=Processes(scorer), runs_root=plan_path.parents[2] / "runs").run()
    return Experiment.open(plan_path.parent)


def test_the_registered_test_over_seeds_by_hand(plan_path: Path) -> None:
    experiment = run_all(plan_path)
    primary = effect(experiment, Comparison(a="spade", b="fixed", alternative="greater"),
                     experiment.plan.evaluation.primary)  # fmt: skip
    assert primary is not None and primary.seeds == [0, 1, 2]
    # Envs weigh equally (4 envs, 2 samples each): one more solved sample, in one env, moves
    # that env's mean by 1/2 and the seed's mean over envs by 1/8, in every seed.
    assert primary.differences == pytest.approx([0.125, 0.125, 0.125])
    assert primary.p_value == pytest.approx(1 / 8)  # all 3 seeds positive: 1 of 2^3 flips
    assert primary.mean == pytest.approx(0.125)
    two_sided = effect(experiment, Comparison(a="spade", b="fixed"),
                       experiment.plan.evaluation.primary)  # fmt: skip
    assert two_sided is not None and two_sided.p_value == pytest.approx(2 / 8)


def test_two_checkpoint_arms_are_compared_sample_by_sample(plan_path: Path) -> None:
    experiment = run_all(plan_path)
    found = effect(experiment, Comparison(a="warm", b="base"), experiment.plan.evaluation.primary)
    assert found is not None and found.seeds == [None]
    assert "mcnemar" in found.test  # 0/1 scores: 1 sample better, none worse
    assert found.p_value == pytest.approx(1.0)


def test_verdict_reports_the_test_seeds_budget_and_status(plan_path: Path) -> None:
    experiment = run_all(plan_path)
    text = (write_verdict(experiment.root)[0]).read_text()
    assert "**Status: complete** (15 of 15 units)." in text
    assert "**spade − fixed = +0.125**" in text and "p = 0.125" in text
    assert "does not reject" in text
    assert "The smallest p-value 3 seeds can give is 0.125 (not below α" in text
    assert "| fixed | 2 | 2 | — | 64 | — | 1800 |" in text  # iterations, ..., agent tokens
    assert "## Deviations from the plan\n\nNone." in text
    assert "sits at its floor" not in text  # solved samples


def test_an_interim_look_says_so(plan_path: Path) -> None:
    Runner(
        plan_path, launcher=Processes(better_spade), runs_root=plan_path.parents[2] / "runs"
    ).run(only=["warm", "base", "spade/seed0", "fixed/seed0"])
    text = write_verdict(plan_path.parent)[0].read_text()
    assert "**Status: interim look** (7 of 15 units done)" in text
    assert "spade/seed1/train" in text
    assert "one seed gives no test" in text


def test_a_primary_metric_at_its_floor_is_named(plan_path: Path) -> None:
    run_all(plan_path, scorer=lambda arm, seed, sample_id: 0.0)
    text = write_verdict(plan_path.parent)[0].read_text()
    assert "it sits at its floor, where no number of seeds can show a difference" in text


def test_verdict_and_figures_regenerate_byte_for_byte_without_run_dirs(
    plan_path: Path, tmp_path: Path
) -> None:
    experiment = run_all(plan_path)
    first = write_verdict(experiment.root)
    shutil.rmtree(plan_path.parents[2] / "runs")
    again = write_verdict(experiment.root, tmp_path / "again")
    assert [p.name for p in first] == ["verdict.md", "curves.svg", "effects.svg"]
    for old, new in zip(first, again, strict=True):
        assert old.read_bytes() == new.read_bytes(), old.name
    assert b"<svg" in first[1].read_bytes()


@pytest.mark.parametrize(
    "root", sorted(p.parent for p in (REPO / "experiments").glob("*/plan.yaml")), ids=str
)
def test_committed_experiments_regenerate_bit_for_bit(root: Path, tmp_path: Path) -> None:
    """Every committed experiment's verdict and figures come back from experiments/ alone."""
    for path in write_verdict(root, tmp_path):
        committed = root / path.name
        assert committed.is_file(), f"{committed} is not committed"
        assert committed.read_bytes() == path.read_bytes(), f"{committed} is stale"


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="no git")
@pytest.mark.parametrize(
    "plan_path", sorted((REPO / "experiments").glob("*/plan.yaml")), ids=lambda p: p.parent.name
)
def test_no_unit_of_a_committed_plan_is_ignored_by_git(plan_path: Path) -> None:
    """A unit git ignores is never committed, and its verdict is stale on a fresh clone
    (`build/` in .gitignore once hid every warm/seedK/build)."""
    plan = load_plan(plan_path)
    files = [f"{plan_path.parent.relative_to(REPO)}/units/{u.name}/unit.json" for u in units(plan)]
    found = subprocess.run(
        ["git", "check-ignore", "--no-index", *files], cwd=REPO, capture_output=True, text=True
    )
    assert found.stdout.split() == []


def test_verdict_command_needs_an_experiment_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["verdict", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "no plan.yaml" in capsys.readouterr().err
