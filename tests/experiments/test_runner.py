"""The runner: units skipped when done, resumed when cut off, refused when they disagree."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from spade.cli.experiment import main
from spade.experiments import ExperimentError, Runner, artifacts
from spade.experiments.plan import Comparison, load_plan
from spade.experiments.units import Unit, train_config_text
from spade.experiments.verdict import effect
from spade.models.weights import weights_sha256
from tests.experiments.conftest import plan_data, write_plan
from tests.experiments.processes import Processes


def runner(plan_path: Path, processes: Processes) -> Runner:
    return Runner(plan_path, launcher=processes, runs_root=plan_path.parents[2] / "runs/exp")


def test_a_full_run_records_every_unit_then_skips_them_all(plan_path: Path) -> None:
    processes = Processes()
    report = runner(plan_path, processes).run()
    # warm start, 2 checkpoint evaluations, 3 seeds x 2 arms x (train + eval)
    assert len(report.done) == 1 + 2 + 12
    root = plan_path.parent / "units"
    unit = json.loads((root / "fixed/seed1/train/unit.json").read_text())
    assert set(unit["files"]) == {"config.yaml", "metrics.jsonl", "plays.jsonl"}
    assert "cores" in unit["host"] and "AVX-512" in unit["host"]
    assert yaml.safe_load(unit["identity"]["config"])["seed"] == 1
    assert yaml.safe_load(unit["identity"]["config"])["iterations"] == 2
    evaluation = json.loads((root / "fixed/seed1/ladder0/unit.json").read_text())
    assert evaluation["weights_sha256"] == unit["weights_sha256"] is not None
    first = (root / "fixed/seed1/ladder0/samples.jsonl").read_text().splitlines()[0]
    assert set(json.loads(first)) == {"benchmark", "id", "score", "parsed", "metrics",
                                      "output_sha256_16"}  # fmt: skip
    assert "success[level=0]" not in json.loads(first)["metrics"]

    again = Processes()
    report = runner(plan_path, again).run()
    assert report.done == [] and len(report.skipped) == 15 and again.calls == []


def test_every_arm_starts_from_the_one_warm_start_with_its_seed(plan_path: Path) -> None:
    processes = Processes()
    runner(plan_path, processes).run()
    configs = [yaml.safe_load(Path(c[1]).read_text()) for c in processes.commands("spade.cli.train")
               if c[0] == "--config"]  # fmt: skip
    assert len(configs) == 6
    assert {c["model"] for c in configs} == {str(plan_path.parents[2] / "runs/warm/sft/model")}
    assert sorted((c["mode"], c["seed"]) for c in configs) == sorted(
        (mode, seed) for mode in ("spade", "fixed") for seed in (0, 1, 2)
    )


def test_a_killed_training_unit_resumes_and_done_units_are_not_redone(plan_path: Path) -> None:
    killed = Processes(fail_on="seed1.config.yaml")
    with pytest.raises(KeyboardInterrupt):
        runner(plan_path, killed).run()
    cut = plan_path.parent / "units/spade/seed1/train"
    assert not (cut / "unit.json").exists()

    processes = Processes()
    report = runner(plan_path, processes).run()
    assert report.done[0] == "spade/seed1/train"
    assert "spade/seed0/train" in report.skipped
    train = processes.commands("spade.cli.train")
    assert train[0][0] == "--resume" and train[0][1].endswith("spade/seed1")
    assert all(c[0] != "--resume" for c in train[1:])


def test_a_training_unit_killed_before_its_first_checkpoint_starts_again(
    plan_path: Path,
) -> None:
    killed = Processes(fail_on="seed1.config.yaml")
    killed.killed_before_a_checkpoint = True
    with pytest.raises(KeyboardInterrupt):
        runner(plan_path, killed).run()

    processes = Processes()
    report = runner(plan_path, processes).run()
    assert report.done[0] == "spade/seed1/train"
    assert all(c[0] != "--resume" for c in processes.commands("spade.cli.train"))


def test_a_unit_cut_off_while_recording_is_redone(plan_path: Path) -> None:
    runner(plan_path, Processes()).run()
    where = plan_path.parent / "units/fixed/seed2/ladder0"
    (where / "samples.jsonl").write_text("")  # a half-written copy: its hash no longer holds
    processes = Processes()
    report = runner(plan_path, processes).run()
    assert report.done == ["fixed/seed2/ladder0"]
    assert len(processes.commands("spade.cli.eval")) == 1


def test_a_recorded_unit_that_disagrees_with_the_plan_stops_the_run(plan_path: Path) -> None:
    runner(plan_path, Processes()).run()
    plan_path.write_text(yaml.safe_dump(plan_data(plan_path.parents[2], iterations=3)))
    with pytest.raises(ExperimentError) as caught:
        runner(plan_path, Processes()).run()
    message = str(caught.value)
    assert "\n" not in message
    assert "/seed0/train/unit.json" in message and str(plan_path) in message
    assert "iterations: 2 ≠ 3" in message


def _recorded_config(plan_path: Path, unit: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Rewrite a done unit's recorded config, as an older schema would have recorded it."""
    unit_file = plan_path.parent / "units" / unit / "unit.json"
    record = json.loads(unit_file.read_text())
    config = yaml.safe_load(record["identity"]["config"])
    change(config)
    record["identity"]["config"] = yaml.safe_dump(config, sort_keys=False)
    unit_file.write_text(json.dumps(record))


def test_a_field_added_to_the_schema_since_a_unit_ran_agrees_only_at_its_default(
    plan_path: Path,
) -> None:
    runner(plan_path, Processes()).run(only=["warm", "spade/seed0"])
    trained = Unit("train", "spade", 0)
    _recorded_config(plan_path, trained.name, lambda c: c["agent"].pop("fit_turn_cap"))
    assert runner(plan_path, Processes()).is_done(trained)
    data = plan_data(plan_path.parents[2])
    data["arms"]["spade"]["set"] = {"agent.fit_turn_cap": True}  # type: ignore[index]
    plan_path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ExperimentError, match=r"agent.fit_turn_cap: None ≠ True"):
        runner(plan_path, Processes()).is_done(trained)


def test_a_field_whose_default_changed_behaviour_agrees_only_at_its_prior_value(
    plan_path: Path,
) -> None:
    """`agent.refill_rounds` defaults to 2 for new runs; a unit recorded before it existed
    ran without refills, which is its prior value 0 (the ladder recipes set it)."""
    runner(plan_path, Processes()).run(only=["warm", "fixed/seed0"])
    trained = Unit("train", "fixed", 0)
    _recorded_config(plan_path, trained.name, lambda c: c["agent"].pop("refill_rounds"))
    assert runner(plan_path, Processes()).is_done(trained)
    data = plan_data(plan_path.parents[2])
    data["arms"]["fixed"]["set"] = {"agent.refill_rounds": 2}  # type: ignore[index]
    plan_path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ExperimentError, match=r"agent.refill_rounds: None ≠ 2"):
        runner(plan_path, Processes()).is_done(trained)


def test_a_recorded_field_the_schema_no_longer_has_is_a_difference(plan_path: Path) -> None:
    runner(plan_path, Processes()).run(only=["warm", "spade/seed0"])
    _recorded_config(plan_path, "spade/seed0/train", lambda c: c["agent"].update(knob=3))
    _recorded_config(plan_path, "warm", lambda c: c.pop("hint_examples"))
    with pytest.raises(ExperimentError, match=r"agent.knob: 3 ≠ None"):
        runner(plan_path, Processes()).is_done(Unit("train", "spade", 0))
    # the warm start's recipe sets hint_examples away from its default: not a new field
    with pytest.raises(ExperimentError, match=r"hint_examples: None ≠ 60"):
        runner(plan_path, Processes()).is_done(Unit("warm"))


def test_a_run_directory_of_another_config_is_refused_not_resumed(plan_path: Path) -> None:
    killed = Processes(fail_on="seed0.config.yaml")
    with pytest.raises(KeyboardInterrupt):
        runner(plan_path, killed).run()
    run_dir = plan_path.parents[2] / "runs/exp/tiny/spade/seed0"
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    config["seed"] = 7
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(ExperimentError, match=r"spade/seed0/config.yaml disagrees .*seed: 7 ≠ 0"):
        runner(plan_path, Processes()).run()


def test_an_evaluation_of_other_weights_is_refused(plan_path: Path) -> None:
    runner(plan_path, Processes()).run()
    unit = plan_path.parent / "units/fixed/seed0/ladder0/unit.json"
    record = json.loads(unit.read_text())
    record["weights_sha256"] = "0" * 64
    unit.write_text(json.dumps(record))
    with pytest.raises(ExperimentError, match="scored weights 0000"):
        runner(plan_path, Processes()).run()


def test_only_runs_the_units_named(plan_path: Path) -> None:
    processes = Processes()
    report = runner(plan_path, processes).run(only=["warm", "fixed/seed0"])
    assert report.done == ["warm", "warm/ladder0", "fixed/seed0/train", "fixed/seed0/ladder0"]


def test_a_lost_checkpoint_is_one_line_naming_the_training_unit(plan_path: Path) -> None:
    runner(plan_path, Processes()).run(only=["warm", "fixed/seed0/train"])
    final = plan_path.parents[2] / "runs/exp/tiny/fixed/seed0/final"
    shutil.rmtree(final)
    with pytest.raises(ExperimentError, match="final is gone.*remove .*units/fixed/seed0/train"):
        runner(plan_path, Processes()).run(only=["fixed/seed0/ladder0"])


def test_a_lost_warm_start_is_rebuilt_and_must_give_the_recorded_weights(
    plan_path: Path,
) -> None:
    runner(plan_path, Processes()).run(only=["warm", "fixed/seed0"])
    warm_dir = plan_path.parents[2] / "runs/warm"
    shutil.rmtree(warm_dir)  # a new machine: run directories are not committed
    processes = Processes()
    report = runner(plan_path, processes).run(only=["spade/seed0/train"])
    assert report.done == ["spade/seed0/train"]
    assert processes.commands("spade.cli.train")[0][:2] == ["warmup", "--config"]
    shutil.rmtree(warm_dir)
    different = Processes()
    different.warm_weights = "other warm weights"
    with pytest.raises(ExperimentError, match="rebuilt warm start's weights .* differ from the"):
        runner(plan_path, different).run(only=["spade/seed1/train"])
    assert not (plan_path.parent / "units/spade/seed1/train").exists()


def test_bad_plans_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plan.yaml"
    cases = {
        "seeds: [1, 1]": "seeds repeat",
        "arms: {a: {config: x.yaml, checkpoint: y}, b: {checkpoint: z}}": "either a config",
        "test: {comparisons: [{a: spade, b: nobody}]}": "unknown arms",
        "evaluation: {sets: {s: {args: []}}, primary: {set: t, benchmark: b, metric: m}}":
            "no evaluation set 't'",
    }  # fmt: skip
    for change, expected in cases.items():
        data = plan_data(tmp_path)
        data.update(yaml.safe_load(change))
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(SystemExit) as exit_info:
            main(["status", str(path)])
        assert exit_info.value.code == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and expected in error and str(path) in error
    path.write_text("name: [")
    with pytest.raises(SystemExit):
        main(["status", str(path)])
    assert "not valid YAML" in capsys.readouterr().err


def test_status_lists_done_and_missing_units(
    plan_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runner(plan_path, Processes()).run(only=["warm"])
    assert main(["status", str(plan_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("done     warm")
    assert any(line.startswith("missing  spade/seed2/ladder0  ") for line in lines)
    assert Unit("train", "fixed", 2).name == "fixed/seed2/train"


def test_independent_units_run_at_the_same_time_with_workers(plan_path: Path) -> None:
    processes = Processes()
    report = runner(plan_path, processes).run(workers=3)
    assert len(report.done) == 15
    assert report.done[:3] == ["warm", "warm/ladder0", "base/ladder0"]
    # each (arm, seed) chain keeps its order: training before its evaluation
    for arm in ("spade", "fixed"):
        for seed in range(3):
            assert report.done.index(f"{arm}/seed{seed}/train") < report.done.index(
                f"{arm}/seed{seed}/ladder0"
            )
    assert runner(plan_path, Processes()).run(workers=3).done == []


def test_a_trained_checkpoint_runs_every_evaluation_set_before_the_next_unit_trains(
    tmp_path: Path,
) -> None:
    # Run directories are not committed and may not outlive a session: a checkpoint's
    # evaluations run while it is on disk, not after the last seed.
    sets = {"ladder0": {"args": ["--preset", "ladder0"]}, "general": {"args": ["--limit", "2"]}}
    evaluation = {**plan_data(tmp_path)["evaluation"], "sets": sets}  # type: ignore[dict-item]
    path = write_plan(tmp_path, evaluation=evaluation)
    report = runner(path, Processes()).run(only=["warm", "fixed/seed0", "spade/seed0"])
    assert report.done == [
        "warm", "warm/ladder0",
        "spade/seed0/train", "spade/seed0/ladder0", "spade/seed0/general",
        "fixed/seed0/train", "fixed/seed0/ladder0", "fixed/seed0/general",
        "warm/general",
    ]  # fmt: skip


def test_units_a_deviation_drops_are_not_run_and_the_verdict_names_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deviation = {"date": "2026-12-05", "what": "Seed 0 of fixed is lost.",
                 "drops": ["fixed/seed0/train", "fixed/seed0/ladder0"]}  # fmt: skip
    path = write_plan(tmp_path, deviations=[deviation])
    report = runner(path, Processes()).run(only=["warm", "fixed/seed0", "fixed/seed1"])
    assert report.done == ["warm", "warm/ladder0", "fixed/seed1/train", "fixed/seed1/ladder0"]
    assert main(["status", str(path)]) == 0
    assert "fixed/seed0" not in capsys.readouterr().out
    assert main(["verdict", str(path.parent)]) == 0
    verdict = (path.parent / "verdict.md").read_text()
    assert "2026-12-05: Seed 0 of fixed is lost. Units left out: fixed/seed0/train," in verdict

    deviation["drops"] = ["fixed/seed9/train"]
    path = write_plan(tmp_path, deviations=[deviation])
    with pytest.raises(SystemExit) as exit_info:
        main(["status", str(path)])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "drop units the plan does not have: fixed/seed9" in error


def _rebuild_seed_2(plan_path: Path) -> None:
    """The dated deviation of a warm start lost after seeds 0-1: seed 2 trains from a
    rebuild, which differs from the recorded warm start in its last bits."""
    data = plan_data(plan_path.parents[2])
    rebuild = {"run_dir": str(plan_path.parents[2] / "runs/warm-rebuilt"), "seeds": [2]}
    data["deviations"] = [{"date": "2026-12-05", "what": "warm start lost",
                           "warm_rebuild": rebuild}]  # fmt: skip
    plan_path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_seeds_of_a_rebuilt_warm_start_train_from_it_and_evaluate_it(plan_path: Path) -> None:
    runner(plan_path, Processes()).run(only=["warm", "spade/seed0", "fixed/seed0", "spade/seed1",
                                             "fixed/seed1"])  # fmt: skip
    shutil.rmtree(plan_path.parents[2] / "runs/warm")  # lost with the machine
    _rebuild_seed_2(plan_path)
    processes = Processes()
    processes.warm_weights = "rebuilt warm weights"
    report = runner(plan_path, processes).run()
    assert report.done == ["base/ladder0", "warm/seed2/build", "warm/seed2/ladder0",
                           "spade/seed2/train", "spade/seed2/ladder0", "fixed/seed2/train",
                           "fixed/seed2/ladder0"]  # fmt: skip
    configs = [yaml.safe_load(Path(c[1]).read_text()) for c in processes.commands("spade.cli.train")
               if c[0] == "--config"]  # fmt: skip
    assert {c["model"] for c in configs} == {
        str(plan_path.parents[2] / "runs/warm-rebuilt/sft/model")
    }
    root = plan_path.parent / "units"
    build = json.loads((root / "warm/seed2/build/unit.json").read_text())
    scored = json.loads((root / "warm/seed2/ladder0/unit.json").read_text())
    registered = json.loads((root / "warm/unit.json").read_text())
    assert build["weights_sha256"] == scored["weights_sha256"] != registered["weights_sha256"]

    from spade.experiments.records import Experiment

    experiment = Experiment.open(plan_path.parent)
    assert experiment.eval_unit("warm", 2, "ladder0").name == "warm/seed2/ladder0"
    assert experiment.eval_unit("warm", 1, "ladder0").name == "warm/ladder0"
    assert experiment.eval_unit("base", 2, "ladder0").name == "base/ladder0"
    assert experiment.missing() == []
    again = Processes()
    assert runner(plan_path, again).run().done == [] and again.calls == []
    warm_base, ladder = Comparison(a="warm", b="base"), experiment.plan.evaluation.primary
    assert getattr(effect(experiment, warm_base, ladder), "seeds", None) == [None]
    shutil.rmtree(root / "warm/ladder0")  # lost with its weights: read against the rebuild
    lost = Experiment.open(plan_path.parent)
    assert getattr(effect(lost, warm_base, ladder), "seeds", None) == [2]


def test_a_rebuilt_seed_reads_the_designer_data_of_its_own_warm_start(plan_path: Path) -> None:
    """What an arm reads from the warm start's run dir (designer.known_designs) moves with the
    rebuild; paths elsewhere, and the seeds of the recorded warm start, are left alone."""
    tmp = plan_path.parents[2]
    _rebuild_seed_2(plan_path)
    data = yaml.safe_load(plan_path.read_text())
    data["arms"]["spade"]["set"] = {"designer.known_designs": str(tmp / "runs/warm/data/d.jsonl")}
    data["arms"]["fixed"]["set"] = {"designer.known_designs": "envs_snapshots"}
    plan_path.write_text(yaml.safe_dump(data, sort_keys=False))
    plan = load_plan(plan_path)

    def known(arm: str, seed: int) -> object:
        text = train_config_text(plan, Unit("train", arm, seed))
        return yaml.safe_load(text)["designer"]["known_designs"]

    assert known("spade", 2) == [str(tmp / "runs/warm-rebuilt/data/d.jsonl")]
    assert known("spade", 1) == str(tmp / "runs/warm/data/d.jsonl")
    assert known("fixed", 2) == ["envs_snapshots"]


def test_warm_weights_on_disk_that_are_not_the_recorded_ones_are_refused(
    plan_path: Path,
) -> None:
    runner(plan_path, Processes()).run(only=["warm"])
    (plan_path.parents[2] / "runs/warm/sft/model/model.safetensors").write_text("other")
    with pytest.raises(ExperimentError, match=r"^warm: the weights in .* are not the recorded"):
        runner(plan_path, Processes()).run(only=["fixed/seed0/train"])


def test_a_lost_rebuild_that_comes_out_different_stops_its_seed(plan_path: Path) -> None:
    _rebuild_seed_2(plan_path)
    processes = Processes()
    processes.warm_weights = "rebuilt warm weights"
    runner(plan_path, processes).run(only=["warm", "warm/seed2", "spade/seed2/train"])
    shutil.rmtree(plan_path.parents[2] / "runs/warm-rebuilt")
    different = Processes()
    different.warm_weights = "a third build"
    with pytest.raises(ExperimentError, match="warm/seed2/build: the rebuilt .* seed 2's units"):
        runner(plan_path, different).run(only=["fixed/seed2/train"])


def test_a_rebuild_of_an_unplanned_seed_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = plan_data(tmp_path)
    data["deviations"] = [{"date": "2026-12-05", "what": "x",
                           "warm_rebuild": {"run_dir": "r", "seeds": [7]}}]  # fmt: skip
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SystemExit):
        main(["status", str(path)])
    assert "warm_rebuild seeds must be planned seeds" in capsys.readouterr().err


def test_no_recorded_training_unit_starts_from_a_built_in_model() -> None:
    """`bootstrap.agent: auto` (added after these units ran) changes what a run from a
    built-in model does, and nothing else: the rule that a new field's default keeps a
    recorded unit's behaviour holds only while no recorded unit starts from one."""
    from spade.models.builtin import BUILTIN_MODELS

    recorded = sorted(Path("experiments").glob("*/units/**/train/config.yaml"))
    assert recorded, "no recorded training unit found under experiments/"
    for path in recorded:
        config = yaml.safe_load(path.read_text())
        assert config["model"] not in BUILTIN_MODELS or "bootstrap" in config, path


def test_a_training_run_from_before_plays_were_logged_records_without_them(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "final").mkdir(parents=True)
    (run_dir / "config.yaml").write_text("seed: 0\n")
    (run_dir / "metrics.jsonl").write_text('{"step": 0}\n')
    (run_dir / "final" / "model.safetensors").write_text("weights")
    weights = artifacts.record_training(run_dir, tmp_path / "unit")
    assert sorted(p.name for p in (tmp_path / "unit").iterdir()) == ["config.yaml", "metrics.jsonl"]
    assert weights == weights_sha256(run_dir / "final")
