"""The reports in headless Chromium: what a person sees, clicks and types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spade.selfplay.run_log import CURVES
from spade.viewer import write_report
from tests.viewer.browser import Browser
from tests.viewer.conftest import SUITE, XSS, write_run_dir
from tests.viewer.test_report import write_results


@pytest.fixture(scope="module")
def results_page(results_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(results_dir, tmp_path_factory.mktemp("pages") / "results.html")


@pytest.fixture(scope="module")
def run_page(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(run_dir, tmp_path_factory.mktemp("pages") / "run.html")


def no_script_ran(browser: Browser) -> None:
    assert browser.dialogs() == [], "alert() ran"
    assert browser.evaluate("window.__spade_xss === undefined"), "an onerror handler ran"
    errors = [e for e in browser.events if e["method"] == "Runtime.exceptionThrown"]
    assert errors == [], errors


def test_summary_shows_benchmarks_metric_ci_and_checkpoint(
    browser: Browser, results_page: Path
) -> None:
    browser.open(results_page)
    summary = browser.text("table.summary")
    assert SUITE in summary and "games" in summary
    assert "success" in summary and "0.750" in summary and "[" in summary  # value and CI
    assert "parse failures" in summary
    assert "predictions:" in browser.text("dl.facts"), "the checkpoint's identity"
    no_script_ran(browser)


def test_clicking_a_suite_sample_shows_its_episode(browser: Browser, results_page: Path) -> None:
    browser.open(results_page, f"tab={SUITE}")
    assert browser.text("main h2") == SUITE
    browser.click("tr.row")
    detail = browser.text(".detail")
    assert "EPISODE" in detail.upper() and "step 1" in detail and "reward 1.000" in detail
    assert browser.evaluate("document.querySelectorAll('.detail .msg.role-user').length") >= 2
    assert "#" in browser.evaluate("location.href") and "open=" in browser.evaluate("location.hash")
    no_script_ran(browser)


def test_hostile_output_is_shown_as_text_and_never_runs(
    browser: Browser, results_page: Path
) -> None:
    browser.open(results_page, f"tab={SUITE}")
    browser.click("tr.row:nth-child(2)")  # the sample answered with markup
    assert XSS in browser.text(".detail"), "the markup is visible as text"
    assert browser.evaluate("document.querySelectorAll('main script, main img').length") == 0
    no_script_ran(browser)


def test_filtering_by_text_and_by_score(browser: Browser, results_page: Path) -> None:
    browser.open(results_page, f"tab={SUITE}")
    rows = "document.querySelectorAll('tr.row').length"
    assert browser.evaluate(rows) == 4 and "4 of 4 samples" in browser.text(".count")
    browser.evaluate("""(() => { const s = document.querySelector('select.filter-f');
        s.value = 'zero'; s.dispatchEvent(new Event('change')); })()""")
    assert browser.evaluate(rows) == 1 and "1 of 4" in browser.text(".count")
    browser.evaluate("""(() => { const s = document.querySelector('select.filter-f');
        s.value = 'all'; s.dispatchEvent(new Event('change')); })()""")
    browser.type_into("input.query", "alert(1)")  # matches the hostile output's text
    browser.evaluate("new Promise((done) => setTimeout(done, 300))")
    assert browser.evaluate(rows) == 1 and "1 of 4" in browser.text(".count")
    assert "q=alert" in browser.evaluate("location.hash"), "the filter is kept in the URL"
    browser.type_into("input.query", "no sample has this")
    browser.evaluate("new Promise((done) => setTimeout(done, 300))")
    assert browser.evaluate(rows) == 0 and "0 of 4" in browser.text(".count")


def test_compare_shows_changed_samples_side_by_side(
    browser: Browser, results_dir: Path, other_results_dir: Path, tmp_path: Path
) -> None:
    page = write_report(results_dir, tmp_path / "compare.html", other_results_dir)
    browser.open(page, "tab=Changes")
    assert "1 better, 1 worse, 2 unchanged" in browser.text(".change-block")
    assert browser.evaluate("document.querySelectorAll('.change-block tr.row').length") == 2
    browser.click(".change-block tr.row")
    columns = browser.evaluate("[...document.querySelectorAll('.side-by-side h4')]"
                               ".map(e => e.innerText)")  # fmt: skip
    assert [c.lower() for c in columns] == ["this run", "other run"]
    assert "\\boxed{nonsense}" in browser.text(".side-by-side .column:nth-child(2)")
    no_script_ran(browser)


def test_run_page_curves_designs_code_and_filters(browser: Browser, run_page: Path) -> None:
    browser.open(run_page)
    assert "iterations done" in browser.text("dl.facts") and "3 of 3" in browser.text("main")
    # Every curve of the run log has its figure; the fixture's metrics fill 6 of them.
    assert browser.evaluate("document.querySelectorAll('.charts figure').length") == len(CURVES)
    empty = browser.evaluate("document.querySelectorAll('.charts figure .empty').length")
    assert empty == len(CURVES) - 6
    assert browser.evaluate("document.querySelectorAll('.charts circle').length") >= 5 * 3 - 1
    browser.click("table.iterations tr.row:nth-child(2)")  # iteration 1 -> its designs
    assert browser.text("main h2") == "Designs" and "1 of 5 designs" in browser.text(".count")
    browser.open(run_page, "tab=Designs")
    browser.click("tr.row")
    detail = browser.text(".detail")
    assert "class ScriptEnv" in detail and "Halve the range" in detail
    assert "</script><script>alert(1)</script>" in detail, "env code is shown as text"
    browser.evaluate("""(() => { const s = document.querySelector('select.filter-status');
        s.value = 'rejected'; s.dispatchEvent(new Event('change')); })()""")
    assert "3 of 5 designs" in browser.text(".count")
    browser.click("tr.row:nth-child(2)")  # the design with no code
    assert "no_code" in browser.text(".detail") and XSS in browser.text(".detail")
    no_script_ran(browser)


def test_episodes_with_and_without_hint_side_by_side(browser: Browser, run_page: Path) -> None:
    browser.open(run_page, "tab=Episodes")
    browser.click("tr.row")
    columns = browser.evaluate("[...document.querySelectorAll('.side-by-side h4')]"
                               ".map(e => e.innerText.toLowerCase())")  # fmt: skip
    assert columns == ["without hint", "with hint"]
    assert "Halve the range" in browser.text(".side-by-side .column:nth-child(2)")
    assert "reward 0.500" in browser.text(".side-by-side")
    no_script_ran(browser)


def test_a_run_without_episodes_says_so(browser: Browser, tmp_path: Path) -> None:
    page = write_report(write_run_dir(tmp_path / "run", episodes=False), tmp_path / "r.html")
    browser.open(page, "tab=Episodes")
    assert "no sample episodes" in browser.text("main .note")


def test_thousands_of_samples_are_paginated(browser: Browser, tmp_path: Path) -> None:
    from spade.evals.samples import SampleResult

    prompt = [{"role": "user", "content": "shared few-shot prompt " * 200}]
    records = [SampleResult("big", f"s{i}", [*prompt, {"role": "user", "content": f"q {i}"}],
                            f"out {i}", str(i), str(i % 7), float(i % 3 == 0))
               for i in range(5000)]  # fmt: skip
    page = write_report(write_results(tmp_path / "big", records), tmp_path / "big.html")
    browser.open(page, "tab=big")
    assert browser.evaluate("document.querySelectorAll('tr.row').length") == 50
    assert "5000 of 5000 samples" in browser.text(".count")
    assert "page 1 of 100" in browser.text(".pager")
    browser.click(".pager .next")
    assert "page 2 of 100" in browser.text(".pager") and "s50" in browser.text("tr.row")
    browser.type_into("input.query", "s4999")
    browser.evaluate("new Promise((done) => setTimeout(done, 300))")
    assert "1 of 5000" in browser.text(".count")
    browser.click("tr.row")
    assert "q 4999" in browser.text(".detail")
    assert json.loads(browser.evaluate("JSON.stringify([...document.querySelectorAll('tr.row')]"
                                       ".map(r => r.dataset.index))")) == ["4999"]  # fmt: skip
