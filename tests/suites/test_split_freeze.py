"""A suite's train/heldout split: declared in each env's metadata, frozen into the manifest,
checked by its schema and consistency rules, read back as `Suite.envs_in`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spade.suites import (
    SEED_SUITE,
    SHIPPED_ROOT,
    FreezeOptions,
    FreezeReport,
    SuiteError,
    freeze_suite,
    load_suite,
    manifest_errors,
    read_manifest,
)
from tests.suites.suite_sources import CREATED, SPELL, SUITE, VERSION


def spell(class_name: str, split: str | None) -> str:
    source = SPELL.replace("class SpellEnv", f"class {class_name}")
    if split is None:
        return source
    return source.replace('"kind": "reasoning",', f'"kind": "reasoning", "split": "{split}",')


def freeze(folder: Path, sources: dict[str, str]) -> FreezeReport:
    (folder / "src").mkdir(parents=True)
    for name, source in sources.items():
        (folder / "src" / name).write_text(source)
    options = FreezeOptions(eval_seeds=2, created=CREATED)
    return freeze_suite([folder / "src"], SUITE, VERSION, root=folder / "root", options=options)


def test_metadata_splits_are_frozen_and_read_back(tmp_path: Path) -> None:
    report = freeze(tmp_path, {
        "a.py": spell("HeldEnv", "heldout"),
        "b.py": spell("TrainEnv", "train"),
        "c.py": spell("TestEnv", "test"),
    })  # fmt: skip
    assert [(e.class_name, e.split) for e in report.manifest.envs] == [
        ("HeldEnv", "heldout"),
        ("TrainEnv", "train"),
    ]
    [rejection] = report.rejected
    assert rejection.reason == "metadata split 'test' is not one of train, heldout"
    suite = load_suite(report.path)
    assert [env.id for env in suite.envs_in("heldout")] == [f"{SUITE}/HeldEnv-v1"]
    assert [env.id for env in suite.envs_in("train")] == [f"{SUITE}/TrainEnv-v1"]


def test_a_split_for_some_envs_only_is_refused(tmp_path: Path) -> None:
    sources = {"a.py": spell("HeldEnv", "heldout"), "b.py": spell("PlainEnv", None)}
    with pytest.raises(SuiteError, match=r"1 of 2 envs declare no metadata 'split' \(first: "):
        freeze(tmp_path, sources)
    assert not (tmp_path / "root" / SUITE / VERSION).exists()


def test_the_manifest_format_checks_splits(frozen: FreezeReport) -> None:
    data = frozen.manifest.to_json()
    assert all("split" not in env for env in data["envs"])  # unsplit: no field at all
    assert len(data["envs"]) >= 1 and manifest_errors(data) == []
    data["envs"][0]["split"] = "test"
    assert manifest_errors(data)[0].startswith("envs[0].split: 'test' is not one of")
    twice = dict(data, envs=[data["envs"][0] | {"split": "heldout"},
                             data["envs"][0] | {"id": f"{SUITE}/OtherEnv-v1",
                                                "file": "envs/other.py"}])  # fmt: skip
    twice["envs"][1].pop("split")
    assert manifest_errors(twice) == [
        "envs[1].split: missing, but other envs of the suite have one"
    ]


def test_an_unsplit_manifest_still_writes_byte_for_byte() -> None:
    folder = SHIPPED_ROOT / SEED_SUITE / "1.0.0"
    text = (folder / "manifest.json").read_text(encoding="utf-8")
    assert read_manifest(folder).dumps() == text
    assert "split" not in json.dumps(json.loads(text)["envs"])
