"""Freeze → verify → tamper → publish → load, against the real sandbox (no mocks)."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from spade.cli.suite import main
from spade.suites import (
    FreezeOptions,
    FreezeReport,
    SuiteError,
    eval_seeds,
    freeze_suite,
    load_suite,
    manifest_errors,
    publish_suite,
    verify_suite,
)
from tests.suites.suite_sources import CREATED, SPELL, SUITE, VERSION, write_sources


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# -- freeze ----------------------------------------------------------------------------------
def test_freeze_keeps_valid_envs_and_reports_the_rest(frozen: FreezeReport) -> None:
    assert [env.id for env in frozen.manifest.envs] == [f"{SUITE}/SpellEnv-v1"]
    [rejected] = frozen.rejected
    assert rejected.origin.endswith("broken.py")
    assert "solution" in rejected.reason
    [duplicate] = frozen.duplicates
    assert duplicate.origin.endswith("spell_restyled.py")
    assert duplicate.duplicate_of.endswith("spell.py")
    assert not duplicate.exact  # differs in comments and layout only
    assert sorted(p.name for p in (frozen.path / "envs").iterdir()) == ["spell.py"]


def test_manifest_records_what_the_envs_need(frozen: FreezeReport) -> None:
    data = json.loads((frozen.path / "manifest.json").read_text())
    assert manifest_errors(data) == []
    assert (data["name"], data["version"], data["created"]) == (SUITE, VERSION, CREATED)
    [env] = data["envs"]
    assert env["file"] == "envs/spell.py"
    assert (env["kind"], env["skill"], env["difficulty"]) == ("reasoning", "recall", "easy")
    assert env["hint"].startswith("The animal is one of")
    assert env["source_document"] == "hand-written"
    assert env["eval_seeds"] == eval_seeds(SUITE, env["id"], 4)
    assert min(env["eval_seeds"]) >= 1000  # disjoint from check's seeds 0, 1, 2
    assert env["validation"]["valid"] and env["validation"]["seeds"] == 3
    scores = env["reference_scores"]
    assert scores["solution_return"] == 1.0
    assert scores["random_success_rate"] < 0.5
    # Stable bytes: sorted keys, two-space indent.
    text = (frozen.path / "manifest.json").read_text()
    assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_existing_version_is_refused_and_nothing_partial_is_left(
    frozen: FreezeReport, tmp_path: Path
) -> None:
    root = frozen.path.parent.parent
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    with pytest.raises(SuiteError, match="already exists"):
        freeze_suite([write_sources(tmp_path / "src")], SUITE, VERSION, root=root)
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


def test_failed_freeze_leaves_no_folder_behind(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("class NotAnEnv:\n    pass\n")
    root = tmp_path / "root"
    with pytest.raises(SuiteError, match="nothing to freeze.*bad.py"):
        freeze_suite([bad], "empty", "1.0.0", root=root)
    assert not root.exists()


def test_strict_freeze_writes_nothing_when_a_source_is_rejected(tmp_path: Path) -> None:
    root = tmp_path / "root"
    with pytest.raises(SuiteError, match="strict: 2 sources not frozen"):
        freeze_suite(
            [write_sources(tmp_path / "src")],
            "s",
            "1.0.0",
            root,
            FreezeOptions(eval_seeds=2, strict=True),
        )
    assert not root.exists()


def test_bad_names_and_versions_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="semantic version"):
        freeze_suite([tmp_path], "s", "1.0", root=tmp_path)
    with pytest.raises(SuiteError, match="suite name"):
        freeze_suite([tmp_path], "a/b", "1.0.0", root=tmp_path)


def test_freeze_from_a_training_run(tmp_path: Path) -> None:
    """memory.json entries: metadata falls back to the entry, document ids are kept, and two
    envs sharing a class name get distinct ids and files."""
    no_metadata = SPELL.replace("    metadata = {", "    _unused = {")
    other_words = SPELL.replace('"bee", "eel"', '"cow", "pig"')
    run = tmp_path / "run"
    run.mkdir()
    entries = [
        {
            "id": "env-7",
            "source": no_metadata,
            "kind": "game",
            "skill": "spelling",
            "difficulty": "hard",
            "document_id": "doc-42",
            "win_rate": 0.25,
            "regret": 0.5,
            "step": 120,
            "hint": "think",
        },
        {"id": "env-9", "source": other_words, "document_id": "doc-43"},
    ]
    (run / "memory.json").write_text(json.dumps(entries))
    report = freeze_suite(
        [run], "run-suite", "0.1.0", tmp_path / "root", FreezeOptions(eval_seeds=2)
    )
    first, second = report.manifest.envs
    assert (first.id, second.id) == ("run-suite/SpellEnv-v0", "run-suite/SpellEnv_2-v0")
    assert (first.file, second.file) == ("envs/env-7.py", "envs/env-9.py")
    assert (first.kind, first.skill, first.difficulty, first.hint) == (
        "game",
        "spelling",
        "hard",
        "think",
    )
    assert first.source_document == "doc-42"
    assert first.provenance == {"memory_id": "env-7", "step": 120, "win_rate": 0.25, "regret": 0.5}
    assert second.kind == "reasoning"  # its class metadata


def test_env_without_a_kind_is_rejected_unless_a_default_is_given(tmp_path: Path) -> None:
    source = tmp_path / "plain.py"
    source.write_text(SPELL.replace('"kind": "reasoning", ', ""))
    with pytest.raises(SuiteError, match="declares no 'kind'"):
        freeze_suite([source], "k", "1.0.0", tmp_path / "a", FreezeOptions(eval_seeds=2))
    report = freeze_suite(
        [source], "k", "1.0.0", tmp_path / "b", FreezeOptions(eval_seeds=2, default_kind="game")
    )
    assert report.manifest.envs[0].kind == "game"


# -- verify ----------------------------------------------------------------------------------
def test_verify_passes_with_recheck(
    frozen: FreezeReport, capsys: pytest.CaptureFixture[str]
) -> None:
    report = verify_suite(frozen.path)
    assert report.ok and report.rechecked and report.envs == 1
    root = str(frozen.path.parent.parent)
    code, out, _ = run_cli(["verify", f"{SUITE}@{VERSION}", "--root", root], capsys)
    assert code == 0 and out.startswith(f"OK {SUITE}@{VERSION}")


def test_one_tampered_byte_fails_verify_naming_the_file(
    suite_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env_file = suite_copy / "envs" / "spell.py"
    data = bytearray(env_file.read_bytes())
    data[data.index(b"cat")] = ord("b")  # "cat" → "bat": still valid code, other hash
    env_file.write_bytes(bytes(data))
    code, _, err = run_cli(["verify", str(suite_copy), "--no-recheck"], capsys)
    assert code == 1
    assert f"{env_file}: sha256 mismatch" in err
    with pytest.raises(SuiteError, match="spell.py: sha256 mismatch"):
        load_suite(suite_copy)


def test_missing_and_unlisted_env_files_are_named(suite_copy: Path) -> None:
    (suite_copy / "envs" / "spell.py").rename(suite_copy / "envs" / "renamed.py")
    problems = {(p.file, p.message.split(" ")[0]) for p in verify_suite(suite_copy).problems}
    assert problems == {("envs/spell.py", "missing"), ("envs/renamed.py", "not")}


def test_schema_violation_names_the_field(
    suite_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = suite_copy / "manifest.json"
    data = json.loads(manifest.read_text())
    data["envs"][0]["kind"] = "puzzle"
    data["envs"][0]["sha256"] = "not-a-hash"
    manifest.write_text(json.dumps(data))
    code, _, err = run_cli(["verify", str(suite_copy)], capsys)
    assert code == 1
    assert "manifest.json: envs[0].kind: 'puzzle' is not one of" in err
    assert "manifest.json: envs[0].sha256:" in err
    with pytest.raises(SuiteError, match=r"envs\[0\]"):
        load_suite(suite_copy)


def test_unknown_suite_is_one_line_exit_1(
    frozen: FreezeReport, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(frozen.path.parent.parent)
    for argv in (["show", "nosuch@1.0.0"], ["verify", f"{SUITE}@9.9.9"]):
        code, _, err = run_cli([*argv, "--root", root], capsys)
        assert code == 1
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "unknown suite 'nosuch'" in run_cli(["show", "nosuch@1.0.0", "--root", root], capsys)[2]


# -- list / show -----------------------------------------------------------------------------
def test_list_and_show(frozen: FreezeReport, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(frozen.path.parent.parent)
    code, out, _ = run_cli(["list", "--root", root, "--json"], capsys)
    assert code == 0
    assert json.loads(out) == [
        {
            "suite": SUITE,
            "version": VERSION,
            "envs": 1,
            "game": 0,
            "reasoning": 1,
            "tool_use": 0,
            "created": CREATED,
            "error": None,
        }
    ]
    code, out, _ = run_cli(["show", f"suite:{SUITE}@{VERSION}", "--root", root], capsys)
    assert code == 0
    assert f"{SUITE}/SpellEnv-v1" in out and "solution return" in out and "1.000" in out


# -- publish ---------------------------------------------------------------------------------
def test_publish_twice_gives_identical_archives(frozen: FreezeReport, tmp_path: Path) -> None:
    first = publish_suite(frozen.path, tmp_path / "a")
    second = publish_suite(frozen.path, tmp_path / "b")
    assert first.archive.read_bytes() == second.archive.read_bytes()
    assert first.sha256 == second.sha256
    assert first.checksum_file.read_text() == f"{first.sha256}  {SUITE}-{VERSION}.tar.gz\n"
    assert publish_suite(frozen.path, tmp_path / "a") == first  # idempotent in place
    raw = first.archive.read_bytes()
    assert raw[4:8] == b"\0\0\0\0"  # gzip header mtime 0
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(raw))) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    assert f"{SUITE}/{VERSION}/manifest.json" in names
    assert f"{SUITE}/{VERSION}/envs/spell.py" in names
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, "", "")}
    assert len({m.mtime for m in members}) == 1


def test_publish_refuses_a_tampered_suite(suite_copy: Path, tmp_path: Path) -> None:
    with (suite_copy / "envs" / "spell.py").open("a") as file:
        file.write("\n")
    with pytest.raises(SuiteError, match="sha256 mismatch.*not publishing"):
        publish_suite(suite_copy, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# -- load ------------------------------------------------------------------------------------
def test_load_suite_make_and_play_the_solution(frozen: FreezeReport) -> None:
    root = frozen.path.parent.parent
    suite = load_suite(f"suite:{SUITE}@{VERSION}", root=root)
    assert (suite.ref, len(suite)) == (f"{SUITE}@{VERSION}", 1)
    spell = suite.env("SpellEnv")
    env = spell.make()
    try:
        for seed in spell.entry.eval_seeds:
            env.reset(seed=seed)
            for action in env.solution():
                _, reward, terminated, truncated, _ = env.step(action)
            assert (reward, terminated, truncated) == (1.0, True, False)
    finally:
        env.close()


def test_suite_envs_register_with_gymnasium(frozen: FreezeReport) -> None:
    suite = load_suite(frozen.path)
    [env_id] = suite.register()
    env = gym.make(env_id)
    try:
        check_env(env.unwrapped, skip_render_check=True)
        observation, _ = env.reset(seed=1)
        assert "Spell" in observation
    finally:
        env.close()


def test_cli_freeze_from_a_list_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sources = write_sources(tmp_path / "src")
    listing = tmp_path / "envs.txt"
    listing.write_text(f"{sources / 'spell.py'}\n{sources / 'broken.py'}\n")
    root = str(tmp_path / "root")
    argv = ["freeze", f"@{listing}", "--name", "cli", "--version", "2.0.0", "--root", root]
    code, out, _ = run_cli([*argv, "--eval-seeds", "2", "--json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["envs"] == ["cli/SpellEnv-v2"]
    assert [r["origin"] for r in report["rejected"]] == [str(sources / "broken.py")]
    code, _, err = run_cli(argv, capsys)
    assert code == 1 and "already exists" in err
    factories = load_suite("cli@2.0.0", root=root).factories()
    env = factories["cli/SpellEnv-v2"]()
    try:
        assert "Spell" in env.reset(seed=0)[0]
    finally:
        env.close()


def test_unreadable_manifest_is_reported(suite_copy: Path) -> None:
    (suite_copy / "manifest.json").write_text("{")
    [problem] = verify_suite(suite_copy).problems
    assert problem.file == "manifest.json" and problem.message.startswith("not valid JSON")
