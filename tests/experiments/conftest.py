from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


def plan_data(tmp: Path, **changes: object) -> dict[str, object]:
    """A small plan on the ladder recipes: two trained arms, two checkpoint arms, 3 seeds."""
    data: dict[str, object] = {
        "name": "tiny",
        "registered": "2026-12-04",
        "question": "Does the designer help a tiny experiment?",
        "warm_start": {
            "config": str(REPO / "configs/ladder/warmup.yaml"),
            "run_dir": str(tmp / "runs/warm"),
        },  # fmt: skip
        "arms": {
            "spade": {"config": str(REPO / "configs/ladder/spade.yaml")},
            "fixed": {"config": str(REPO / "configs/ladder/fixed.yaml")},
            "warm": {"checkpoint": "warm"},
            "base": {"checkpoint": "smollm2-135m"},
        },
        "seeds": [0, 1, 2],
        "iterations": 2,
        "evaluation": {
            "sets": {"ladder0": {"args": ["--preset", "ladder0"]}},
            "primary": {"set": "ladder0", "benchmark": "ladder", "metric": "success"},
            "secondary": [{"set": "ladder0", "benchmark": "ladder", "metric": "score"}],
        },
        "test": {
            "comparisons": [
                {"a": "spade", "b": "fixed", "alternative": "greater"},
                {"a": "fixed", "b": "warm"},
                {"a": "warm", "b": "base"},
            ],
            "resamples": 500,
        },  # fmt: skip
        "curves": ["agent/return", "envs/win_rate"],
    }
    data.update(changes)
    return data


def write_plan(tmp: Path, **changes: object) -> Path:
    path = tmp / "experiments" / "tiny" / "plan.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(plan_data(tmp, **changes), sort_keys=False))
    return path


@pytest.fixture
def plan_path(tmp_path: Path) -> Path:
    return write_plan(tmp_path)
