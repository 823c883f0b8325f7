"""A run dir made by the real training loop (two iterations of a tiny model, as in
tests/selfplay/test_loop.py), rendered and opened in Chromium."""

from __future__ import annotations

from pathlib import Path

import pytest

from spade.selfplay.config import load_config
from spade.viewer import write_report
from spade.viewer.training import CURVES
from tests.rl.conftest import smollm2_tokenizer, tiny_model_dir  # noqa: F401
from tests.selfplay.test_loop import StandInRun, tiny_config
from tests.viewer.browser import Browser


@pytest.mark.slow
def test_a_real_training_run_dir(tiny_model_dir: Path, tmp_path: Path, browser: Browser) -> None:  # noqa: F811
    config = load_config(None, tiny_config(tiny_model_dir, iterations=2, **{"corpus.source": None}))
    run = StandInRun(config, tmp_path / "run")
    run.start()
    run.run()  # iteration 0 accepts both designs; iteration 1 rejects them as near duplicates
    page = write_report(tmp_path / "run", tmp_path / "run.html")
    browser.open(page)
    assert "2 of 2" in browser.text("dl.facts")
    charts = browser.evaluate("document.querySelectorAll('.charts figure').length")
    assert charts == len(CURVES)  # one chart a curve
    browser.open(page, "tab=Designs")
    assert "4 of 4 designs" in browser.text(".count")
    browser.click("tr.row")
    detail = browser.text(".detail")
    assert "class LengthEnv" in detail and "win rate (no hint)" in detail
    browser.click("tr.row:nth-child(3)")
    assert "near_duplicate" in browser.text(".detail")
    browser.open(page, "tab=Memory")
    assert "2 of 2 envs" in browser.text(".count")
    assert browser.dialogs() == []
