"""The report without a browser: what the page data holds, how it is embedded, the CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from spade.cli.eval import main as eval_main
from spade.evals.samples import SampleResult
from spade.viewer import ViewError, build_report
from spade.viewer.page import _csp_hash
from spade.viewer.sections import call_text, value_section
from spade.viewer.strings import StringTable
from tests.viewer.conftest import HOSTILE, ROOT, SUITE, write_run_dir

DATA_BLOCK = re.compile(r'<script type="application/json" id="spade-data">(.*?)</script>', re.S)


def page_data(report: str) -> dict[str, Any]:
    (block,) = DATA_BLOCK.findall(report)
    data: dict[str, Any] = json.loads(block)
    return data


def texts(data: dict[str, Any], section: dict[str, Any]) -> list[str]:
    """Every text a section shows, resolved through the string table."""
    strings = data["S"]
    if section["k"] == "chat":
        return [strings[m["t"]] for m in section["m"] if "t" in m] + [
            strings[c] for m in section["m"] for c in m.get("c", [])
        ]
    if section["k"] == "list":
        return [strings[i] for i in section["v"]]
    if section["k"] == "fields":
        return [strings[v] for _, v in section["v"]]
    return [strings[section["v"]]]


def write_results(path: Path, records: list[SampleResult]) -> Path:
    path.mkdir(parents=True)
    (path / "samples").mkdir()
    names = sorted({r.benchmark for r in records})
    document = {"schema_version": 1, "checkpoint": {"spec": "tiny"}, "benchmarks": {
        name: {"version": "1", "n": sum(r.benchmark == name for r in records),
               "primary": "accuracy", "metrics": {"accuracy": {"value": 0.5, "ci95": [0, 1]}},
               "parse_failures": 0} for name in names}}  # fmt: skip
    (path / "results.json").write_text(json.dumps(document))
    for name in names:
        lines = [json.dumps(r.as_dict()) + "\n" for r in records if r.benchmark == name]
        (path / "samples" / f"{name}.jsonl").write_text("".join(lines))
    return path


def test_hostile_text_cannot_leave_the_data_block(results_dir: Path) -> None:
    report = build_report(results_dir)
    # The only script elements are the data block and the viewer itself.
    assert report.count("<script") == 2 and report.count("</script>") == 2
    assert "<!--" not in DATA_BLOCK.findall(report)[0]
    data = page_data(report)
    assert any(HOSTILE in s for s in data["S"]), "the hostile output is kept, as text"


def test_suite_episode_has_steps_rewards_and_observations(results_dir: Path) -> None:
    data = page_data(build_report(results_dir))
    suite = next(b for b in data["benchmarks"] if b["name"] == SUITE)
    assert suite["primary"] == "success" and suite["n"] == 4 and len(suite["rows"]) == 4
    assert [row[1] for row in suite["rows"]] == [1.0, 0.0, 1.0, 1.0]
    solved = {s["t"]: s for s in suite["details"][0]}
    assert solved["Prompt"]["m"][0]["r"] == "system"
    episode = solved["Episode"]["m"]
    replies = [m for m in episode if m["r"] == "assistant"]
    assert [m["s"] for m in replies] == list(range(1, len(replies) + 1))
    assert all("s" not in m for m in episode if m["r"] != "assistant")
    assert replies[-1]["w"] == 1.0, "the last step's reward is shown with it"
    assert any(m["r"] == "user" for m in episode), "observations are part of the episode"
    games = next(b for b in data["benchmarks"] if b["name"] == "games")
    assert any(s["t"] == "Episode" for s in games["details"][0])


def test_shapes_of_every_runner_are_drawn(tmp_path: Path) -> None:
    """BFCL's played chat with tool calls, its saved turns of calls, ACEBench's dict prompt
    and dialogue output, and an unknown shape (pretty JSON)."""
    bfcl_chat = [
        {"role": "user", "content": "Go to the document folder."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c0", "type": "function",
             "function": {"name": "cd", "arguments": '{"folder": "document"}'}}]},
        {"role": "tool", "tool_call_id": "c0", "content": "{'current_working_directory': 'doc'}"},
        {"role": "assistant", "content": "Done."},
    ]  # fmt: skip
    records = [
        SampleResult("bfcl", "multi_turn_base_0", bfcl_chat, [[["cd(folder='document')"]], []],
                     [[["cd(folder='document')"]]], None, 1.0),
        SampleResult("acebench", "agent_multi_turn_1", {"agent_system": "Be an agent.",
                     "question": "Book a flight."},
                     [{"role": "user", "content": "Book it."}, {"role": "tool", "content": "ok"}],
                     None, {"end_state": [{"Travel": {}}]}, 0.0, parsed=False),
        SampleResult("odd", "0", {"a": [1, {"b": None}]}, 3.5, None, None, 0.5),
    ]  # fmt: skip
    data = page_data(build_report(write_results(tmp_path / "r", records)))
    by_name = {b["name"]: b for b in data["benchmarks"]}
    bfcl = {s["t"]: s for s in by_name["bfcl"]["details"][0]}
    assert 'cd({"folder": "document"})' in texts(data, bfcl["Episode"])
    assert data["S"][bfcl["Episode"]["m"][2]["n"]] == "c0", "a tool result names its call"
    assert texts(data, bfcl["Output"]) == ["turn 1 · step 1: cd(folder='document')",
                                           "turn 2: (no calls)"]  # fmt: skip
    ace = {s["t"]: s for s in by_name["acebench"]["details"][0]}
    assert ace["Prompt"]["k"] == "fields" and ace["Output"]["k"] == "chat"
    assert by_name["acebench"]["rows"][0][4] is False, "parse failures are marked"
    odd = {s["t"]: s for s in by_name["odd"]["details"][0]}
    assert odd["Prompt"]["k"] == "json" and '"b": null' in texts(data, odd["Prompt"])[0]


def test_tool_calls_in_every_form() -> None:
    assert call_text("ls(a=True)") == "ls(a=True)"
    assert call_text({"name": "mv", "arguments": {"a": 1}}) == 'mv({"a": 1})'
    assert call_text({"function": {"name": "x", "arguments": "not json"}}) == "x(not json)"
    assert call_text([1, 2]) == "[1, 2]"
    strings = StringTable()
    section = value_section("Output", ["[4]", "[0]"], strings)
    assert section["k"] == "list" and [strings.strings[i] for i in section["v"]] == ["[4]", "[0]"]


def test_a_shared_prompt_is_stored_once(tmp_path: Path) -> None:
    fewshot = [{"role": "user", "content": "example question " * 300},
               {"role": "assistant", "content": "example answer " * 300}]  # fmt: skip
    records = [
        SampleResult("b", str(i), [*fewshot, {"role": "user", "content": f"question {i}"}],
                     f"answer {i}", str(i), str(i), 1.0) for i in range(500)
    ]  # fmt: skip
    report = build_report(write_results(tmp_path / "r", records))
    naive = 500 * sum(len(m["content"]) for m in fewshot)
    assert len(report) < naive / 10
    assert report.count("example question " * 300) == 1


def test_compare_lists_changed_samples_both_ways(
    results_dir: Path, other_results_dir: Path
) -> None:
    data = page_data(build_report(results_dir, other_results_dir))
    suite = next(b for b in data["benchmarks"] if b["name"] == SUITE)
    compare = suite["compare"]
    ids = [row[0] for row in suite["rows"]]
    # env 0: solved here, failed there (up); env 1: the reverse (down).
    assert [(r[0], r[1], r[2]) for r in compare["rows"]] == [(ids[0], 1.0, 0.0), (ids[1], 0.0, 1.0)]
    assert (compare["up"], compare["down"], compare["same"]) == (1, 1, 2)
    assert compare["delta"]["value"] == pytest.approx(0.0) and compare["delta"]["n"] == 4
    there = {s["t"]: s for s in compare["details"][0]}
    assert "\\boxed{nonsense}" in texts(data, there["Output"])
    games = next(b for b in data["benchmarks"] if b["name"] == "games")
    assert "compare" not in games, "games was not run there: nothing to pair"
    assert data["other"]["only_there"] == []


def test_run_dir_designs_join_memory_and_show_code(tmp_path: Path) -> None:
    data = page_data(build_report(write_run_dir(tmp_path / "run")))
    assert data["kind"] == "run"
    rows = data["designs"]["rows"]
    assert [r[6] for r in rows] == ["accepted", "accepted", "near_duplicate", "no_code",
                                    "step_types"]  # fmt: skip
    assert [r[7] for r in rows[:2]] == [0.25, 0.75], "win rates come from memory.json"
    first = {s["t"]: s for s in data["designs"]["details"][0]}
    assert texts(data, first["Code"])[0].startswith("import random")
    assert "Here it is." in texts(data, first["Designer reply"])[0]
    repaired = {s["t"]: s for s in data["designs"]["details"][2]}  # the repair's first try
    assert texts(data, repaired["First failed check"])[0].startswith("syntax_error")
    assert "FirstTryEnv" in texts(data, repaired["First reply (before the repair)"])[0]
    assert "First reply (before the repair)" not in first
    no_code = {s["t"]: s for s in data["designs"]["details"][3]}
    assert "Code" not in no_code and texts(data, no_code["Failed check"])[0].startswith("no_code")
    assert [point[1] for point in data["series"]["envs/win_rate"]] == [0.25, 0.5, 0.75]
    assert [key for key, _ in data["curves"]][:2] == ["designer/validity_rate", "envs/win_rate"]
    rows = data["episodes"]["rows"]
    assert [(r[3], r[6]) for r in rows] == [(False, 1), (True, 0)], "paired by env and seed"


def test_assets_draw_text_never_markup() -> None:
    script = resources.files("spade.viewer").joinpath("assets", "viewer.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                 "new Function"):  # fmt: skip
        assert sink not in script, sink
    assert "</script" not in script.lower()


def test_content_security_policy_admits_only_the_inline_assets(results_dir: Path) -> None:
    report = build_report(results_dir)
    (policy,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]*)"', report)
    (script,) = re.findall(r"<script>(.*?)</script>", report, re.S)
    (style,) = re.findall(r"<style>(.*?)</style>", report, re.S)
    assert f"script-src {_csp_hash(script)};" in policy
    assert f"style-src {_csp_hash(style)};" in policy
    assert "default-src 'none'" in policy and "unsafe-inline" not in policy


def view(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spade.cli.eval", "view", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)  # fmt: skip


def test_cli_writes_the_report_atomically(results_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "nested" / "report.html"
    done = view(str(results_dir), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout and out.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in out.parent.iterdir()] == ["report.html"], "no temporary file left"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing", "no such directory"),
        (lambda d: d, "neither a spade-eval results dir"),
        (lambda d: (d / "results.json").write_text("{oops") and d, "results.json: not valid JSON"),
        (lambda d: (d / "results.json").write_text("[]") and d, "not a spade-eval results file"),
        (lambda d: (d / "metrics.jsonl").write_text('{"step": 0}\nnope\n') and d,
         "metrics.jsonl line 2: not valid JSON"),
        (lambda d: (d / "config.yaml").write_text("a: [") and d, "config.yaml: not valid YAML"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(
    make: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, line = view_in_process(capsys, str(make(tmp_path)))
    assert code == 2 and message in line
    assert not (tmp_path / "report.html").exists(), "no report for bad input"


def view_in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Exit status and the one error line of `spade-eval view ARGS`."""
    with pytest.raises(SystemExit) as exit_info:
        eval_main(["view", *args])
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: spade-eval view: "), lines
    return int(exit_info.value.code or 0), lines[0]


def test_compare_needs_two_results_dirs(
    results_dir: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, line = view_in_process(capsys, str(run_dir), "--compare", str(results_dir))
    assert code == 2 and "--compare takes two results dirs" in line
    code, line = view_in_process(capsys, str(results_dir), "--compare", str(run_dir))
    assert code == 2 and "not a spade-eval results dir" in line


def test_a_bad_samples_line_names_the_file(results_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    (copy / "samples").mkdir(parents=True)
    (copy / "results.json").write_text((results_dir / "results.json").read_text())
    (copy / "samples" / "x.jsonl").write_text(json.dumps({"benchmark": "x"}) + "\n")
    with pytest.raises(ViewError, match=r"x.jsonl record 1: no 'benchmark' or 'sample_id'"):
        build_report(copy)
