"""Session checks: the offline data must be present, or the run says so loudly."""

import os

import pytest

from tests.data import DATA_DIR


def pytest_sessionstart(session: pytest.Session) -> None:
    # Data-dependent tests skip without data; a whole run silently skipping them would hide
    # failures, so a missing data dir is an error unless explicitly allowed.
    if not DATA_DIR.is_dir() and not os.environ.get("SPADE_ALLOW_MISSING_DATA"):
        raise pytest.UsageError(
            f"offline benchmark data not found at {DATA_DIR}: put it at ../shared/data, set "
            "SPADE_DATA_DIR, or set SPADE_ALLOW_MISSING_DATA=1 to skip the tests that need it"
        )
