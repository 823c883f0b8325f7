"""Reading a spade-eval output folder: results.json plus samples/*.jsonl."""

import json
from pathlib import Path

import pytest

from spade.leaderboard import LeaderboardError, RunResults, json_digest, load_run, row_from_run
from tests.leaderboard.runs import PROVENANCE, binary_scores, run


def write_run(folder: Path, current: RunResults) -> Path:
    (folder / "samples").mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(current.results))
    for name, scores in current.samples.items():
        lines = [
            json.dumps(
                {
                    "benchmark": name,
                    "sample_id": i,
                    "prompt": "p",
                    "output": "o",
                    "answer": None,
                    "target": None,
                    "score": s,
                    "metrics": {},
                    "parsed": True,
                    "extra": {},
                }
            )
            for i, s in scores.items()
        ]
        # On-disk names need not match benchmark names (`suite:x@1.0.0` is not a safe name).
        (folder / "samples" / f"{name.replace(':', '_')}.jsonl").write_text("\n".join(lines))
    return folder


def test_load_run_reads_results_and_samples(tmp_path: Path) -> None:
    original = run({"gsm8k": binary_scores(10, 7), "suite:seed@1.0.0": binary_scores(4, 1)})
    loaded = load_run(write_run(tmp_path / "out", original))
    assert loaded.results == original.results
    assert loaded.samples == original.samples
    row = row_from_run(loaded, "base", PROVENANCE)
    assert row.benchmarks["gsm8k"].value == pytest.approx(0.7)
    assert row.samples["suite:seed@1.0.0"] == binary_scores(4, 1)
    assert row.created == "2025-01-01T00:00:00+00:00"


def test_run_without_samples_folder_has_no_samples(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text(json.dumps(run({"gsm8k": binary_scores(3, 1)}).results))
    assert load_run(tmp_path).samples == {}


def test_missing_results_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(LeaderboardError, match="results.json: missing"):
        load_run(tmp_path)


def test_bad_sample_line_names_file_and_line(tmp_path: Path) -> None:
    folder = write_run(tmp_path / "out", run({"gsm8k": binary_scores(3, 1)}))
    jsonl = folder / "samples" / "gsm8k.jsonl"
    jsonl.write_text(jsonl.read_text() + '\n{"benchmark": "gsm8k", "sample_id": "9", "score": "x"}')
    with pytest.raises(LeaderboardError, match=r"gsm8k.jsonl:4: score must be a finite number"):
        load_run(folder)


def test_duplicate_sample_ids_are_rejected(tmp_path: Path) -> None:
    folder = write_run(tmp_path / "out", run({"gsm8k": binary_scores(3, 1)}))
    jsonl = folder / "samples" / "gsm8k.jsonl"
    jsonl.write_text(jsonl.read_text() + "\n" + jsonl.read_text().splitlines()[0])
    with pytest.raises(LeaderboardError, match="sample '0' appears twice"):
        load_run(folder)


def test_results_without_the_primary_metric_is_one_line_error() -> None:
    current = run({"gsm8k": binary_scores(3, 1)})
    current.results["benchmarks"]["gsm8k"]["primary"] = "exact_match"
    with pytest.raises(LeaderboardError) as caught:
        row_from_run(current, "x", PROVENANCE)
    message = str(caught.value)
    assert "\n" not in message
    assert "benchmarks.gsm8k.primary: 'exact_match' is not in its metrics" in message


def test_results_with_nan_scores_are_rejected() -> None:
    current = run({"gsm8k": binary_scores(3, 1)})
    current.results["benchmarks"]["gsm8k"]["metrics"]["accuracy"]["value"] = float("nan")
    with pytest.raises(LeaderboardError, match="accuracy: value and ci95 must be finite"):
        row_from_run(current, "x", PROVENANCE)


def test_json_digests_are_the_same_in_memory_and_read_back(tmp_path: Path) -> None:
    outputs = {"games": {"0": ["e4", "(1, 2)"], "1": [["cd(folder='x')"]]}}
    in_memory = run({"games": binary_scores(2, 1)}, outputs=outputs)
    folder = tmp_path / "out"
    (folder / "samples").mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(in_memory.results))
    lines = [
        json.dumps({"benchmark": "games", "sample_id": i, "output": o, "answer": i, "score": s})
        for (i, o), s in zip(outputs["games"].items(), (1.0, 0.0), strict=True)
    ]
    (folder / "samples" / "games.jsonl").write_text("\n".join(lines))
    read_back = load_run(folder)
    assert read_back.outputs == in_memory.outputs and read_back.answers == in_memory.answers
    assert set(in_memory.answers["games"]) == {"0", "1"}
    assert in_memory.outputs["games"]["0"] == json_digest(["e4", "(1, 2)"])
    assert json_digest({"a": 1, "b": 2}) == json_digest({"b": 2, "a": 1})
    assert json_digest(("e4",)) == json_digest(["e4"])  # a tuple is written as a list
    assert json_digest("The answer is 4") != json_digest("The answer is 5")


def test_records_without_output_or_answer_have_no_digest() -> None:
    current = RunResults.from_records(
        run({"gsm8k": binary_scores(1, 1)}).results,
        [{"benchmark": "gsm8k", "sample_id": "0", "score": 1.0}],
    )
    assert current.samples == {"gsm8k": {"0": 1.0}}
    assert current.outputs == {} and current.answers == {}
