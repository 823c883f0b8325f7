"""Scorers cut short by their alarms, on math_verify's and lm-eval's minerva_math timeouts.

A planted comparison stands for a slow one: it sends itself the alarm (the moment a real
slow comparison would be interrupted), so nothing here depends on the machine's speed.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

import math_verify.grader
import pytest
from lm_eval.tasks.minerva_math import utils as minerva
from math_verify import parse, verify

from spade.evals.scoring_alarms import RETRY_SCALES, score_with_retries

SIGNAL_FUNCTIONS = (signal.signal, signal.alarm)


def planted(real: Callable[..., Any], slow_calls: int, limits: list[float]) -> Callable[..., Any]:
    """`real`, but its first `slow_calls` calls run out of time; every call records the time
    left on its alarm (its limit)."""

    def comparison(*args: Any) -> Any:
        limits.append(signal.getitimer(signal.ITIMER_REAL)[0])
        if len(limits) <= slow_calls:
            signal.raise_signal(signal.SIGALRM)
        return real(*args)

    return comparison


def math_verify_half() -> bool:
    # Sympy objects only: a string pair would be compared without sympy_expr_eq.
    return verify(parse("$\\frac{1}{2}$")[0], parse("$0.5$")[0])


def test_a_comparison_cut_short_is_retried_with_a_longer_limit(monkeypatch: pytest.MonkeyPatch):
    limits: list[float] = []
    real = math_verify.grader.sympy_expr_eq
    monkeypatch.setattr(math_verify.grader, "sympy_expr_eq", planted(real, 1, limits))
    scored = score_with_retries(math_verify_half)
    assert (scored.value, scored.retries, scored.timed_out) == (True, 1, False)
    # math_verify's own 5 s, then 4x that: the limits as set, not time measured.
    assert limits[0] <= 5 < limits[1] <= 5 * RETRY_SCALES[0]


def test_a_comparison_cut_short_every_time_is_a_timeout(monkeypatch: pytest.MonkeyPatch):
    limits: list[float] = []
    real = math_verify.grader.sympy_expr_eq
    monkeypatch.setattr(math_verify.grader, "sympy_expr_eq", planted(real, 99, limits))
    scored = score_with_retries(math_verify_half)
    assert (scored.value, scored.retries, scored.timed_out) == (False, len(RETRY_SCALES), True)
    assert len(limits) == 1 + len(RETRY_SCALES)


def test_minervas_own_alarm_is_watched_and_its_handler_put_back(monkeypatch: pytest.MonkeyPatch):
    """lm-eval's minerva_math times `is_equiv` with its own alarm class, which raises
    TimeoutError and leaves its handler installed."""
    limits: list[float] = []
    monkeypatch.setattr(minerva, "parse_latex", planted(minerva.parse_latex, 1, limits))
    before = signal.getsignal(signal.SIGALRM)
    scored = score_with_retries(lambda: minerva.is_equiv("\\frac{1}{2}", "0.5"))
    assert (scored.value, scored.retries, scored.timed_out) == (True, 1, False)
    assert signal.getsignal(signal.SIGALRM) is before
    assert (signal.signal, signal.alarm) == SIGNAL_FUNCTIONS


def test_a_scorer_without_alarms_runs_once():
    scored = score_with_retries(lambda: 42)
    assert (scored.value, scored.retries, scored.timed_out) == (42, 0, False)
