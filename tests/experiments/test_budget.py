"""spade-experiment status: what the missing units will take, from the done units' wall times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spade.cli.experiment import main
from spade.experiments.budget import Estimate, estimates, summary
from spade.experiments.records import Experiment
from tests.experiments.conftest import write_plan

XEON = "Intel(R) Xeon(R) Processor, AVX-512, 2 cores"
EPYC = "AMD EPYC, no AVX-512, 2 cores"


def _record(plan_path: Path, name: str, seconds: float | None, host: str | None) -> None:
    """A done unit as the runner seals it (the estimate reads only unit.json)."""
    where = plan_path.parent / "units" / name
    where.mkdir(parents=True, exist_ok=True)
    record: dict[str, object] = {"identity": {}, "files": {}, "seconds": seconds}
    if host is not None:
        record["host"] = host
    (where / "unit.json").write_text(json.dumps(record))


@pytest.fixture
def rebuilt_plan(tmp_path: Path) -> Path:
    """Seeds 0-2, seed 2 trained from a rebuilt warm start (a dated deviation)."""
    rebuild = {"run_dir": str(tmp_path / "runs/warm-rebuilt"), "seeds": [2]}
    deviation = {"date": "2026-12-05", "what": "warm start lost", "warm_rebuild": rebuild}
    return write_plan(tmp_path, deviations=[deviation])


def _by_name(plan_path: Path, only: tuple[str, ...] = ()) -> dict[str, Estimate]:
    return {e.unit.name: e for e in estimates(Experiment.open(plan_path.parent), only)}


def test_a_missing_unit_costs_the_median_of_the_same_work_on_other_seeds(
    rebuilt_plan: Path,
) -> None:
    _record(rebuilt_plan, "spade/seed0/train", 100.0, f"{XEON}, 2026-12-05")
    _record(rebuilt_plan, "spade/seed1/train", 400.0, f"{EPYC}, 2026-12-07")
    _record(rebuilt_plan, "fixed/seed0/train", 50.0, f"{XEON}, 2026-12-05")
    _record(rebuilt_plan, "spade/seed0/ladder0", 30.0, None)
    found = _by_name(rebuilt_plan)
    spade = found["spade/seed2/train"]
    assert spade.seconds == 250.0 and spade.peers == 2
    assert spade.hosts == (EPYC, XEON)  # the dates dropped
    assert found["fixed/seed1/train"].seconds == 50.0
    # another arm's training, or an evaluation, is not the same work
    assert found["fixed/seed1/ladder0"].seconds is None
    assert found["spade/seed1/ladder0"].seconds == 30.0
    assert "spade/seed0/train" not in found  # done units are not estimated


def test_a_warm_start_that_found_its_weights_is_no_measure_of_a_rebuild(
    rebuilt_plan: Path,
) -> None:
    _record(rebuilt_plan, "warm", 3562.0, None)
    _record(rebuilt_plan, "warm/seed2/build", 0.0, f"{XEON}, 2026-12-05")
    assert _by_name(rebuilt_plan).get("warm/seed2/build") is None  # done, so not estimated
    _record(rebuilt_plan, "warm/ladder0", 180.0, None)
    found = _by_name(rebuilt_plan)
    assert found["warm/seed2/ladder0"].seconds == 180.0
    (rebuilt_plan.parent / "units/warm/seed2/build/unit.json").unlink()
    build = _by_name(rebuilt_plan)["warm/seed2/build"]
    assert build.seconds == 3562.0 and build.peers == 1


def test_only_picks_the_units_of_a_session_and_the_summary_says_what_it_rests_on(
    rebuilt_plan: Path,
) -> None:
    _record(rebuilt_plan, "fixed/seed0/train", 1620.0, f"{XEON}, 2026-12-05")
    _record(rebuilt_plan, "fixed/seed0/ladder0", 180.0, f"{XEON}, 2026-12-05")
    chosen = estimates(Experiment.open(rebuilt_plan.parent), ["fixed/seed1", "spade/seed1"])
    assert [e.unit.name for e in chosen] == [
        "spade/seed1/train",
        "spade/seed1/ladder0",
        "fixed/seed1/train",
        "fixed/seed1/ladder0",
    ]
    line = summary(chosen)
    assert line.startswith("4 units to run, about 0.5 h at the recorded pace")
    assert "plus 2 with no peer run yet" in line and f"(measured on: {XEON})" in line


def test_status_prints_each_missing_units_estimate_and_the_total(
    rebuilt_plan: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(rebuilt_plan, "fixed/seed0/train", 600.0, f"{XEON}, 2026-12-05")
    assert main(["status", str(rebuilt_plan), "--only", "fixed/seed1/train"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "done     fixed/seed0/train  10.0 min" in lines
    assert "missing  fixed/seed1/train  ~10.0 min (median of 1)" in lines
    assert lines[-1].startswith("1 unit to run, about 0.2 h")
