"""Leaderboard files: schema checks, upsert, atomic saves, regenerated Markdown and PNG."""

import json
from pathlib import Path
from typing import Any

import pytest

import spade.atomic
from spade.leaderboard import Leaderboard, LeaderboardError, Provenance, row_from_run
from spade.leaderboard.row import git_commit
from tests.leaderboard.runs import binary_scores, flipped, row, run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SCORES = binary_scores(100, 60)


def saved_board(path: Path) -> Leaderboard:
    board = Leaderboard()
    board.upsert(row("base", {"gsm8k": SCORES, "mbpp": binary_scores(40, 10)}))
    board.save(path)
    return board


def test_save_then_load_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "ci.json"
    board = saved_board(path)
    loaded = Leaderboard.load(path)
    assert loaded.rows == board.rows
    assert json.loads(path.read_text())["schema_version"] == 1
    # Digests and generation settings are kept for the gate's reproduction check.
    stored = loaded.rows[0]
    assert len(stored.outputs["gsm8k"]) == len(stored.answers["gsm8k"]) == 100
    assert stored.benchmarks["gsm8k"].greedy


def test_a_row_stored_before_digests_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "ci.json"
    saved_board(path)
    data = json.loads(path.read_text())
    for row_data in data["rows"]:
        del row_data["outputs"], row_data["answers"]
        for entry in row_data["benchmarks"].values():
            del entry["generation"]
    path.write_text(json.dumps(data))
    loaded = Leaderboard.load(path).rows[0]
    assert loaded.outputs == loaded.answers == {} and not loaded.benchmarks["gsm8k"].greedy


def test_upsert_replaces_the_row_with_the_same_label(tmp_path: Path) -> None:
    board = Leaderboard()
    assert board.upsert(row("base", {"gsm8k": SCORES})) is False
    assert board.upsert(row("new", {"gsm8k": SCORES})) is False
    board.rows[0].settings["tolerances"] = {"gsm8k": 0.05}  # set by hand on the CI row
    board.rows[0].settings["max_changed_samples"] = {"gsm8k": 1}
    assert board.upsert(row("base", {"gsm8k": flipped(SCORES, down=10)})) is True
    assert board.labels == ["base", "new"]
    assert board.row("base").benchmarks["gsm8k"].value == pytest.approx(0.5)
    assert board.row("base").changed_sample_limit("gsm8k") == 1
    assert board.row("base").tolerance_floor("gsm8k") == 0.05  # carried over


def test_unknown_label_lists_the_labels() -> None:
    board = Leaderboard([row("base", {"gsm8k": SCORES})])
    with pytest.raises(LeaderboardError, match=r"no row labelled 'nope' \(labels: base\)"):
        board.row("nope")


def test_row_keeps_provenance() -> None:
    provenance = Provenance.collect(command="spade-eval --label base", results_dir="out")
    made = row_from_run(run({"gsm8k": SCORES}), "base", provenance)
    assert made.provenance.command == "spade-eval --label base"
    assert made.provenance.results_dir == "out" and made.provenance.host
    assert made.to_json()["provenance"]["git_commit"] == provenance.git_commit


def _corrupt(data: dict[str, Any]) -> None:
    data["rows"][0]["benchmarks"]["gsm8k"]["value"] = "high"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (_corrupt, "rows[0].benchmarks.gsm8k.value: 'high' is not of type 'number'"),
        (lambda d: d.pop("rows"), "(top level): 'rows' is a required property"),
        (lambda d: d["rows"].append(d["rows"][0]), "rows[1].label: 'base' repeats rows[0]"),
        (lambda d: d.update(baseline="gone"), "baseline: 'gone' is not the label of a row"),
        (lambda d: d["rows"][0]["samples"].update(x={}), "rows[0].samples.x: no such benchmark"),
        (
            lambda d: d["rows"][0]["samples"]["gsm8k"].update({"7": "x"}),
            "rows[0].samples.gsm8k.7: 'x' is not a number",
        ),
        (
            lambda d: d["rows"][0]["outputs"]["gsm8k"].update({"7": "not-a-digest"}),
            "rows[0].outputs.gsm8k.7: 'not-a-digest' is not 16 hex characters",
        ),
        (lambda d: d["rows"][0]["outputs"].update(x={}), "rows[0].outputs.x: no such benchmark"),
        (
            lambda d: d["rows"][0]["answers"]["mbpp"].update({"3": 7}),
            "rows[0].answers.mbpp.3: 7 is not 16 hex characters",
        ),
        (
            lambda d: d["rows"][0]["sample_metrics"].update(gsm8k={"return": {"7": "x"}}),
            "rows[0].sample_metrics.gsm8k.return.7: 'x' is not a number",
        ),
        (
            lambda d: d["rows"][0]["sample_metrics"].update(gsm8k={"return": [0.5]}),
            "rows[0].sample_metrics.gsm8k.return: [0.5] is not of type 'object'",
        ),
        (
            lambda d: d["rows"][0]["sample_metrics"].update(x={"return": {}}),
            "rows[0].sample_metrics.x: no such benchmark",
        ),
        (
            lambda d: d["rows"][0]["settings"].update(max_changed_samples={"gsm8k": -1}),
            "rows[0].settings.max_changed_samples.gsm8k: -1 is less than the minimum of 0",
        ),
    ],
)
def test_schema_rejects_a_bad_file_in_one_line(tmp_path: Path, edit: Any, expected: str) -> None:
    path = tmp_path / "ci.json"
    saved_board(path)
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(LeaderboardError) as caught:
        Leaderboard.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and expected in message and "\n" not in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [("{not json", "not valid JSON"), ('{"schema_version": 1, "rows": [NaN]}', "NaN")],
)
def test_unparsable_file_is_one_line_error(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "ci.json"
    path.write_text(text)
    with pytest.raises(LeaderboardError, match=expected):
        Leaderboard.load(path)


def test_missing_file_is_an_error_unless_allowed(tmp_path: Path) -> None:
    with pytest.raises(LeaderboardError, match="ci.json: missing"):
        Leaderboard.load(tmp_path / "ci.json")
    assert Leaderboard.load(tmp_path / "ci.json", missing_ok=True).rows == []


def test_crash_mid_write_leaves_the_old_files(tmp_path: Path, monkeypatch: Any) -> None:
    path = tmp_path / "ci.json"
    board = saved_board(path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    board.upsert(row("new", {"gsm8k": flipped(SCORES, down=5)}))

    def crash(src: Any, dst: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(spade.atomic.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        board.save(path)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after == before  # old contents, and no temporary files left behind


def test_unwritable_value_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ci.json"
    board = saved_board(path)
    before = path.read_bytes()
    board.rows[0].samples["gsm8k"]["0"] = float("nan")
    with pytest.raises(LeaderboardError, match=r"ci.json \(not written\)"):
        board.save(path)
    assert path.read_bytes() == before


def test_markdown_and_png_are_regenerated(tmp_path: Path) -> None:
    path = tmp_path / "ci.json"
    board = saved_board(path)
    markdown, png = tmp_path / "ci.md", tmp_path / "ci.png"
    one_row_md, one_row_png = markdown.read_text(), png.read_bytes()
    assert png.read_bytes().startswith(PNG_MAGIC)
    assert "| base " in one_row_md and "0.600 ± " in one_row_md and "(n=100)" in one_row_md
    assert "## Δ vs" not in one_row_md and "![scores](ci.png)" in one_row_md

    board.upsert(row("worse", {"gsm8k": flipped(SCORES, down=20), "mbpp": binary_scores(40, 10)}))
    board.save(path)
    two_rows_md = markdown.read_text()
    assert "## Δ vs base" in two_rows_md and "-0.200* [" in two_rows_md
    assert png.read_bytes().startswith(PNG_MAGIC) and png.read_bytes() != one_row_png

    board.save(path)  # same rows, same files
    assert markdown.read_text() == two_rows_md


def test_explicit_baseline_is_kept_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "ci.json"
    board = saved_board(path)
    board.upsert(row("worse", {"gsm8k": flipped(SCORES, down=20)}))
    board.baseline = "worse"
    board.save(path)
    assert Leaderboard.load(path).baseline == "worse"
    assert "## Δ vs worse" in (tmp_path / "ci.md").read_text()


def test_git_commit_read_from_the_git_folder(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
    assert git_commit(tmp_path / "sub" / "dir") == "a" * 40
    (git / "refs" / "heads" / "main").unlink()
    (git / "packed-refs").write_text(f"# pack-refs\n{'b' * 40} refs/heads/main\n")
    assert git_commit(tmp_path) == "b" * 40


def test_spade_eval_prints_deltas_against_a_lone_shipped_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from argparse import Namespace

    from spade.cli.leaderboard_actions import print_baseline_deltas

    path = tmp_path / "main.json"
    Leaderboard([row("base", {"gsm8k": SCORES})]).save(path)
    print_baseline_deltas(Namespace(leaderboard=path, baseline=None, metric=None),
                          run({"gsm8k": flipped(SCORES, up=1)}))  # fmt: skip
    out = capsys.readouterr().out
    assert "Deltas against 'base'" in out and "gsm8k" in out


def _add_row(path: str, label: str, locked_save: bool, loaded: Any, first: bool) -> None:
    """A load-change-save. The first writer signals once it has loaded, then takes a while
    to save (as an evaluation's render does); the second starts its own load on that signal."""
    import contextlib
    import time

    from spade.leaderboard import locked

    if not first:
        loaded.wait(60)
    with locked(path) if locked_save else contextlib.nullcontext():
        board = Leaderboard.load(path, missing_ok=True)
        board.upsert(row(label, {"gsm8k": SCORES}))
        if first:
            loaded.set()
            time.sleep(2.0)
        board.save(path)


@pytest.mark.parametrize("locked_save", [True, False])
def test_parallel_evaluations_each_keep_their_row_under_the_lock(
    tmp_path: Path, locked_save: bool
) -> None:
    """Two processes add rows to one board at once: with the lock both rows land; without it
    (the check that this test can fail) the later save drops the earlier's row."""
    import multiprocessing

    path = tmp_path / "main.json"
    saved_board(path)
    context = multiprocessing.get_context("spawn")
    loaded = context.Event()
    workers = [context.Process(target=_add_row, args=(str(path), label, locked_save, loaded, first))
               for label, first in (("warm", True), ("warm+fixed", False))]  # fmt: skip
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    labels = set(Leaderboard.load(path).labels)
    if locked_save:
        assert labels == {"base", "warm", "warm+fixed"}
    else:
        assert len(labels) == 2  # one row lost: what the lock is for
