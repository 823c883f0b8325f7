"""An experiment folder's report: a tiny experiment made by the real runner, with stand-ins for
the `spade-train` and `spade-eval` processes (tests/experiments/processes.py: a real unit
trains a model for half an hour), rendered and opened in Chromium."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spade.cli.view import main as view_main
from spade.experiments import Experiment, Runner
from spade.experiments.verdict import effect
from spade.experiments.write import write_verdict
from spade.viewer import ViewError, build_report, write_report
from tests.experiments.conftest import write_plan
from tests.experiments.processes import SAMPLE_IDS, Processes
from tests.viewer.browser import Browser
from tests.viewer.conftest import XSS, XSS_MARK
from tests.viewer.test_report import page_data, view_in_process

SOLVED = {"fixed": {1, 2, 3}, "warm": {0}}
"""Which of the 8 samples (indices into SAMPLE_IDS) each arm solves (base: none); spade solves
0, 1, 2 and 3 + seed, so that per seed some samples go up and some down against fixed."""
QUESTION = f"Does the designer help? {XSS} {XSS_MARK}"
UNITS = 15  # warm, warm/ladder0, base/ladder0, and 2 arms x 3 seeds x (train, ladder0)


def solves(arm: str, seed: int | None, sample_id: str) -> float:
    solved = {0, 1, 2, 3 + (seed or 0)} if arm == "spade" else SOLVED.get(arm, set())
    return float(SAMPLE_IDS.index(sample_id) in solved)


def return_at(arm: str, seed: int, step: int) -> float:
    return (1.0 if arm == "spade" else 0.5) + seed / 10 + step / 100


class CurvedProcesses(Processes):
    """The stand-in processes, with training curves that differ by arm and seed."""

    def _train(self, args: list[str], killed: bool) -> None:
        super()._train(args, killed)
        flag = "--resume" if "--resume" in args else "--run-dir"
        run_dir = Path(args[args.index(flag) + 1])  # runs/NAME/ARM/seedK
        arm, seed = run_dir.parent.name, int(run_dir.name.removeprefix("seed"))
        lines = (run_dir / "metrics.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
        for record in records:
            record["agent/return"] = return_at(arm, seed, record["step"])
        text = "".join(json.dumps(r) + "\n" for r in records)
        (run_dir / "metrics.jsonl").write_text(text)


def make_experiment(tmp: Path, only: list[str] | None = None) -> Path:
    plan_path = write_plan(tmp, question=QUESTION)
    Runner(plan_path, launcher=CurvedProcesses(solves), runs_root=tmp / "runs").run(only=only)
    write_verdict(plan_path.parent)
    return plan_path.parent


@pytest.fixture(scope="module")
def experiment_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_experiment(tmp_path_factory.mktemp("complete"))


@pytest.fixture(scope="module")
def interim_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    only = ["warm", "base", "spade/seed0", "fixed/seed0"]
    return make_experiment(tmp_path_factory.mktemp("interim"), only)


@pytest.fixture(scope="module")
def data(experiment_dir: Path) -> dict[str, Any]:
    return page_data(build_report(experiment_dir))


def test_summary_data_arms_seeds_units_and_tests(experiment_dir: Path, data: dict) -> None:
    assert data["kind"] == "experiment" and data["title"] == "spade experiment: tiny"
    assert [(a["name"], a["trained"]) for a in data["arms"]] == [
        ("spade", True),
        ("fixed", True),
        ("warm", False),
        ("base", False),
    ]
    facts = dict(data["facts"])
    assert facts["status"] == f"complete ({UNITS} of {UNITS} units done)"
    assert facts["registered test"] == "spade − fixed, greater, α = 0.05"
    assert facts["primary metric"] == "ladder success (ladder0)" and XSS in facts["question"]
    assert len(data["units"]) == UNITS and {u[2] for u in data["units"]} == {"done"}
    assert data["units"][0][:3] == ["warm", "warm", "done"]
    means = data["means"]
    assert means["seeds"] == [0, 1, 2]
    # spade solves 4 of the 8 samples in every seed, fixed 3, warm 1, base none.
    assert [[row[0], [c and c[0] for c in row[1]], row[2]] for row in means["rows"]] == [
        ["spade", [0.5, 0.5, 0.5], 0.5],
        ["fixed", [0.375, 0.375, 0.375], 0.375],
        ["warm", [0.125], 0.125],
        ["base", [0.0], 0.0],
    ]
    assert all(c[1] == len(SAMPLE_IDS) for row in means["rows"] for c in row[1])
    tests = data["effects"]
    assert [(t["label"], t["registered"]) for t in tests] == [
        ("spade − fixed", True),
        ("fixed − warm", False),
        ("warm − base", False),
    ]
    experiment = Experiment.open(experiment_dir)
    registered = effect(
        experiment, experiment.plan.test.comparisons[0], experiment.plan.evaluation.primary
    )
    assert registered is not None
    shown = tests[0]["effect"]
    assert shown["seeds"] == 3 and shown["test"] == "sign-flip over seeds, greater"
    assert [shown["mean"], *shown["ci"], shown["p"]] == pytest.approx(
        [registered.mean, registered.lo, registered.hi, registered.p_value]
    )
    assert data["S"][data["verdict"]].startswith("# Verdict: tiny")


def test_curves_have_one_line_per_arm_and_seed(data: dict) -> None:
    assert data["curves"] == ["agent/return", "envs/win_rate"]
    lines = data["series"]["agent/return"]
    assert [(line["arm"], line["seed"]) for line in lines] == [
        (arm, seed) for arm in ("spade", "fixed") for seed in (0, 1, 2)
    ]
    for line in lines:
        steps, values = zip(*line["points"], strict=True)
        assert steps == (0, 1)
        assert values == pytest.approx([return_at(line["arm"], line["seed"], s) for s in steps])
    assert len(data["series"]["envs/win_rate"]) == 6


def test_changed_samples_counted_by_hand(data: dict) -> None:
    changes = {c["label"]: c for c in data["changes"]}
    assert [(c["label"], c["kind"]) for c in data["changes"]] == [
        ("spade − fixed", "registered"),
        ("fixed − warm", "registered"),
        ("warm − base", "registered"),
        ("spade − warm", "vs warm start"),
    ]
    ids = SAMPLE_IDS
    # spade {0, 1, 2, 3 + seed} against fixed {1, 2, 3}: seed 0 only 0 goes up; seeds 1 and 2
    # add 3 down and 3 + seed up.
    spade_fixed = changes["spade − fixed"]
    assert spade_fixed["per_seed"] == [[0, 1, 0, 7], [1, 2, 1, 5], [2, 2, 1, 5]]
    assert [tuple(r) for r in spade_fixed["rows"]] == [
        (ids[0], 0, 1.0, 0.0),
        (ids[0], 1, 1.0, 0.0),
        (ids[3], 1, 0.0, 1.0),
        (ids[4], 1, 1.0, 0.0),
        (ids[0], 2, 1.0, 0.0),
        (ids[3], 2, 0.0, 1.0),
        (ids[5], 2, 1.0, 0.0),
    ]
    # fixed {1, 2, 3} against the warm start's one evaluation {0}, in every seed.
    assert changes["fixed − warm"]["per_seed"] == [[s, 3, 1, 4] for s in (0, 1, 2)]
    assert len(changes["fixed − warm"]["rows"]) == 12
    # Two checkpoint arms: one evaluation each, no seed.
    assert changes["warm − base"]["per_seed"] == [[None, 1, 0, 7]]
    assert changes["warm − base"]["rows"] == [[ids[0], None, 1.0, 0.0]]
    assert changes["spade − warm"]["per_seed"] == [[s, 3, 0, 5] for s in (0, 1, 2)]


def test_a_changed_sample_shows_both_committed_records(data: dict) -> None:
    change = data["changes"][0]
    here, there = change["details"][1]  # ids[0] at seed 1: spade solved it, fixed did not
    fields = [{name: data["S"][v] for name, v in sides[0]["v"]} for sides in (here, there)]
    assert [f["sample id"] for f in fields] == [SAMPLE_IDS[0]] * 2
    assert [f["score"] for f in fields] == ["1", "0"]
    assert all(len(f["output sha256 (16)"]) == 16 for f in fields)


def test_an_interim_experiment_renders(interim_dir: Path) -> None:
    data = page_data(build_report(interim_dir))
    done = [u[0] for u in data["units"] if u[2] == "done"]
    assert len(done) == 7 and "spade/seed1/train" not in done
    assert dict(data["facts"])["status"] == f"interim look (7 of {UNITS} units done)"
    rows = {row[0]: row for row in data["means"]["rows"]}
    assert [c and c[0] for c in rows["spade"][1]] == [0.5, None, None]
    assert rows["spade"][2] == 0.5
    registered = data["effects"][0]["effect"]
    assert registered["seeds"] == 1 and registered["p"] is None, "one seed: no test (NaN)"
    assert data["changes"][0]["per_seed"] == [[0, 1, 0, 7]]
    assert [(line["arm"], line["seed"]) for line in data["series"]["agent/return"]] == [
        ("spade", 0),
        ("fixed", 0),
    ]


def test_a_plan_with_no_unit_run_renders(tmp_path: Path) -> None:
    root = write_plan(tmp_path).parent
    data = page_data(build_report(root))
    assert {u[2] for u in data["units"]} == {"missing"} and data["verdict"] is None
    assert all(t["effect"] is None for t in data["effects"])
    assert all(c["rows"] == [] and c["per_seed"] == [] for c in data["changes"])


def test_cli_writes_the_report(
    experiment_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    assert view_main([str(experiment_dir), "--out", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    assert page_data(out.read_text())["kind"] == "experiment"


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda root: (root / "plan.yaml").write_text("name: ["), "plan.yaml: not valid YAML"),
        (lambda root: (root / "plan.yaml").write_text("name: x\n"), "plan.yaml: registered"),
        (
            lambda root: (root / "units/warm/unit.json").write_text("{"),
            "units/warm/unit.json: not valid JSON",
        ),
        (
            lambda root: (root / "units/base/ladder0/samples.jsonl").write_text("{}\nnope\n"),
            "samples.jsonl line 2: not valid JSON",
        ),
    ],
)
def test_a_damaged_folder_is_one_line_naming_the_file(
    damage: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_experiment(tmp_path, only=["warm", "base"])
    damage(root)
    capsys.readouterr()  # the runner's progress lines
    code, line = view_in_process(capsys, str(root))
    assert code == 2 and message in line, line


def test_compare_takes_no_experiment_folder(experiment_dir: Path, run_dir: Path) -> None:
    with pytest.raises(ViewError, match="experiment folder: --compare takes two results dirs"):
        build_report(experiment_dir, run_dir)


# --- in Chromium ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def page(experiment_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(experiment_dir, tmp_path_factory.mktemp("pages") / "experiment.html")


def no_script_ran(browser: Browser) -> None:
    assert browser.dialogs() == [], "alert() ran"
    assert browser.evaluate("window.__spade_xss === undefined"), "an onerror handler ran"
    errors = [e for e in browser.events if e["method"] == "Runtime.exceptionThrown"]
    assert errors == [], errors


def choose(browser: Browser, selector: str, value: str) -> None:
    browser.evaluate(f"""(() => {{ const s = document.querySelector({json.dumps(selector)});
        s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()""")


def test_summary_in_the_browser(browser: Browser, page: Path) -> None:
    browser.open(page)
    assert "complete (15 of 15 units done)" in browser.text("dl.facts")
    assert XSS in browser.text("dl.facts"), "the question's markup is shown as text"
    means = browser.text("table.means")
    assert "0.500" in means and "0.125 (one evaluation)" in means
    tests = browser.text("table.tests")
    assert "spade − fixed (registered)" in tests and "sign-flip over seeds, greater" in tests
    assert "# Verdict: tiny" in browser.text("pre.verdict")
    no_script_ran(browser)


def test_curves_in_the_browser(browser: Browser, page: Path) -> None:
    browser.open(page, "tab=Curves")
    assert browser.evaluate("document.querySelectorAll('.charts figure').length") == 2
    lines = browser.evaluate(
        "[...document.querySelectorAll('.charts figure')]"
        ".map(f => f.querySelectorAll('polyline').length)"
    )
    assert lines == [6, 6], "one line per (arm, seed)"
    colours = browser.evaluate(
        "[...new Set([...document.querySelectorAll('.charts polyline')]"
        ".map(l => getComputedStyle(l).stroke))]"
    )
    assert len(colours) == 2, "one colour per arm"
    assert browser.text(".legend").split() == ["spade", "fixed"]
    no_script_ran(browser)


def test_changes_filter_by_seed_and_direction(browser: Browser, page: Path) -> None:
    browser.open(page, "tab=Changes")
    assert "7 of 7 changed samples" in browser.text(".count")
    choose(browser, "select.filter-seed", "1")
    assert "3 of 7" in browser.text(".count")
    choose(browser, "select.filter-dir", "down")
    assert "1 of 7" in browser.text(".count")
    browser.click("tr.row")
    columns = browser.evaluate(
        "[...document.querySelectorAll('.side-by-side h4')].map(e => e.innerText.toLowerCase())"
    )
    assert columns == ["spade", "fixed"] and SAMPLE_IDS[3] in browser.text(".detail")
    choose(browser, "select.comparison-pick", "3")  # spade − warm (vs warm start)
    assert "9 of 9 changed samples" in browser.text(".count")
    assert "cmp=3" in browser.evaluate("location.hash")
    no_script_ran(browser)


def test_interim_in_the_browser(browser: Browser, interim_dir: Path, tmp_path: Path) -> None:
    browser.open(write_report(interim_dir, tmp_path / "interim.html"))
    assert "not run" in browser.text("table.means")
    assert "spade/seed1/train" in browser.text("table.units")
    browser.open(tmp_path / "interim.html", "tab=Curves")
    assert browser.evaluate("document.querySelectorAll('.charts polyline').length") == 4
    no_script_ran(browser)
