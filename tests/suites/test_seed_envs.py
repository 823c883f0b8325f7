"""Every seed env (envs_snapshots/spade-seed/1.0.0/envs/*.py, found at collection time) passes
check, is solved by its own solution() on fresh seeds, and is not solved by luck (gymnasium-style:
one test per env). Few seeds per env keep the whole run to seconds."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from spade.envs.checks import validate_source
from spade.suites import (
    KINDS,
    SEED_ENVS_DIR,
    SEED_SUITE,
    ReferenceScores,
    score_source,
    verify_suite,
)
from spade.suites.seeds import eval_seeds

SEED_FILES = sorted(p for p in SEED_ENVS_DIR.glob("*.py") if not p.name.startswith("_"))
RANDOM_SEEDS = 8
"""Episodes per env for the random agent: one lucky win stays under the 0.2 line (1/8)."""


@functools.cache
def scores(path: Path) -> ReferenceScores:
    # Test seeds come from the file name (the suite's own derive from the env id).
    seeds = eval_seeds(SEED_SUITE, path.stem, RANDOM_SEEDS)
    return score_source(path.read_text(encoding="utf-8"), path.name, seeds)


def test_there_are_seed_envs() -> None:
    assert len(SEED_FILES) >= 1


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.stem)
def test_seed_env_passes_check(path: Path) -> None:
    report = validate_source(path.read_text(encoding="utf-8"), path.name)
    assert report.valid, [f"{c.name}: {c.detail}" for c in report.failed()]
    metadata = report.metadata
    assert metadata.get("kind") in KINDS
    for key in ("skill", "difficulty", "hint"):
        assert isinstance(metadata.get(key), str) and metadata[key], f"metadata[{key!r}]"


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.stem)
def test_seed_env_solution_solves_and_random_agent_does_not(path: Path) -> None:
    result = scores(path)
    assert result.solution_return == 1.0
    assert result.random_success_rate < 0.5


def test_random_agent_rarely_solves_seed_envs() -> None:
    lucky = [p.stem for p in SEED_FILES if scores(p).random_success_rate >= 0.2]
    assert len(lucky) <= 0.2 * len(SEED_FILES), lucky


REPO_SUITES = Path(__file__).resolve().parents[2] / "envs_snapshots"
FROZEN_SEED_VERSIONS = sorted(p for p in (REPO_SUITES / SEED_SUITE).glob("*") if p.is_dir())


@pytest.mark.skipif(not FROZEN_SEED_VERSIONS, reason=f"no frozen {SEED_SUITE} suite yet")
@pytest.mark.parametrize("path", FROZEN_SEED_VERSIONS, ids=lambda p: p.name)
def test_frozen_seed_suite_is_intact(path: Path) -> None:
    """The committed seed suite matches its manifest (schema and hashes; the sandbox re-check
    of the same sources is what the tests above do)."""
    report = verify_suite(path, recheck=False)
    assert report.ok, [f"{p.file}: {p.message}" for p in report.problems]
