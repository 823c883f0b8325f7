"""A unit's committed artifacts: compact copies of what its run wrote, and `unit.json`.

`unit.json` records the unit's identity (what the plan asked for), the sha256 of every file
written beside it, the weights it produced or scored, and its wall time. A unit whose files
all match their recorded hashes is done; anything else is redone. Full outputs, transcripts
and weights stay in the run directory (not committed): samples keep ids, scores, metrics and a
digest of the output; designs keep their summary and a digest of the code.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from spade.atomic import write_atomic
from spade.host import this_host
from spade.models.weights import weights_sha256
from spade.selfplay.run_log import DESIGNS_FILE, PLAYS_FILE

UNIT_FILE = "unit.json"
DESIGN_FIELDS = (
    "step",
    "group",
    "kind",
    "skill",
    "difficulty",
    "document_id",
    "attempts",
    "valid",
    "failure",
    "env_id",
    "win_rate",
    "regret",
)
"""What a design summary keeps (its code and replies are digested, not copied)."""


class ArtifactError(ValueError):
    """A run directory that lacks what its unit must record."""


@dataclass(frozen=True)
class Recorded:
    """What `unit.json` says."""

    identity: dict[str, Any]
    files: dict[str, str]
    weights_sha256: str | None
    seconds: float | None

    @classmethod
    def read(cls, where: Path) -> Recorded | None:
        try:
            data = json.loads((where / UNIT_FILE).read_text(encoding="utf-8"))
            return cls(
                data["identity"], data["files"], data.get("weights_sha256"), data.get("seconds")
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def intact(self, where: Path) -> bool:
        """Every recorded file is there with its recorded sha256."""
        return all(
            (where / name).is_file() and file_sha256(where / name) == digest
            for name, digest in self.files.items()
        )


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def digest(value: Any) -> str:
    """16 hex digits of sha256 over the canonical JSON of `value` (an output, some code)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def write_unit(
    where: Path,
    identity: dict[str, Any],
    weights: str | None,
    seconds: float | None,
) -> None:
    """Seal `where`: hash every file in it (but unit.json) and write unit.json last, so a
    unit cut off before this line is not done."""
    files = {
        p.name: file_sha256(p)
        for p in sorted(where.iterdir())
        if p.is_file() and p.name != UNIT_FILE
    }
    record = {
        "identity": identity,
        "files": files,
        "weights_sha256": weights,
        "seconds": None if seconds is None else round(seconds, 1),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        # The seconds depend on the CPU, and so do a training run's weights in their last
        # bits (a warm start rebuilt on another CPU differs): say which machine made them.
        "host": str(this_host()).removeprefix("host: "),
    }
    write_atomic(where / UNIT_FILE, json.dumps(record, indent=1, ensure_ascii=False) + "\n")


def fresh(where: Path) -> Path:
    """An empty artifacts folder (what a cut-off attempt left is thrown away)."""
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    return where


def record_warm(run_dir: Path, where: Path) -> str:
    """The warm start's config, data summary and losses; returns its weights' sha256."""
    fresh(where)
    _copy(run_dir / "config.yaml", where / "config.yaml")
    _copy(run_dir / "data" / "summary.md", where / "data-summary.md")
    if (run_dir / "losses.jsonl").is_file():
        _copy(run_dir / "losses.jsonl", where / "losses.jsonl")
    return _weights(run_dir / "sft" / "model")


def record_training(run_dir: Path, where: Path) -> str:
    """A training run's config, metrics, plays (one compact line each, where the run wrote
    them) and design summaries; returns its weights' sha256."""
    fresh(where)
    _copy(run_dir / "config.yaml", where / "config.yaml")
    _copy(run_dir / "metrics.jsonl", where / "metrics.jsonl")
    if (run_dir / PLAYS_FILE).is_file():  # runs from before plays were logged have none
        _copy(run_dir / PLAYS_FILE, where / PLAYS_FILE)
    designs = run_dir / DESIGNS_FILE
    if designs.is_file():
        write_atomic(
            where / DESIGNS_FILE,
            "".join(
                json.dumps(design_summary(record), ensure_ascii=False) + "\n"
                for record in _jsonl(designs)
            ),
        )
    return _weights(run_dir / "final")


def record_evaluation(output: Path, where: Path) -> None:
    """An evaluation's results.json and one compact line per sample."""
    fresh(where)
    _copy(output / "results.json", where / "results.json")
    lines = []
    for path in sorted((output / "samples").glob("*.jsonl")):
        lines += [json.dumps(sample_summary(r), ensure_ascii=False) + "\n" for r in _jsonl(path)]
    if not lines:
        raise ArtifactError(f"{output}/samples: no per-sample records")
    write_atomic(where / "samples.jsonl", "".join(lines))


def design_summary(record: dict[str, Any]) -> dict[str, Any]:
    summary = {key: record.get(key) for key in DESIGN_FIELDS}
    summary["code_sha256_16"] = digest(record.get("code")) if record.get("code") else None
    return summary


def sample_summary(record: dict[str, Any]) -> dict[str, Any]:
    """Id, score and the sample's own metrics (the `[group]` breakdowns are re-derived from
    the id); the output only as a digest."""
    found = record.get("metrics")
    metrics: dict[str, Any] = found if isinstance(found, dict) else {}
    return {
        "benchmark": record.get("benchmark"),
        "id": record.get("sample_id"),
        "score": record.get("score"),
        "parsed": record.get("parsed"),
        "metrics": {k: v for k, v in metrics.items() if "[" not in k},
        "output_sha256_16": digest(record.get("output")),
    }


def _weights(model_dir: Path) -> str:
    sha = weights_sha256(model_dir)
    if sha is None:
        raise ArtifactError(f"{model_dir}: no weights (model.safetensors) to record")
    return sha


def _copy(source: Path, target: Path) -> None:
    if not source.is_file():
        raise ArtifactError(f"{source}: missing")
    shutil.copyfile(source, target)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
