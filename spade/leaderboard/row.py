"""A leaderboard row: one run's summary scores, its per-sample scores and digests of each
sample's output and extracted answer, and where it came from."""

from __future__ import annotations

import math
import shlex
import socket
import sys
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from spade.leaderboard.errors import LeaderboardError
from spade.leaderboard.run import RunResults
from spade.leaderboard.validation import (
    leaderboard_schema,
    raise_first,
    schema_errors,
    score_errors,
    without_scores,
)

CURRENT_LABEL = "(current)"
"""Label given to a run compared without being stored."""
GATE_SETTINGS = ("tolerances", "max_changed_samples")
"""Keys of `settings` set by hand on a stored row to tune the regression gate."""


@dataclass(frozen=True)
class BenchmarkScore:
    """One benchmark's primary metric in a row, and the generation settings it ran with."""

    version: str
    n: int
    primary: str
    value: float
    ci95: tuple[float, float]
    parse_failures: int = 0
    generation: dict[str, Any] | None = None
    """The declaration's generation settings (`max_gen_toks`, `temperature`, ...); None in
    rows stored before they were kept."""
    options: dict[str, Any] | None = None
    """The runner options it ran with (a preset may override them); None in rows stored
    before they were kept."""

    @property
    def greedy(self) -> bool:
        """True when the settings are known and say greedy decoding (temperature 0)."""
        return self.generation is not None and self.generation.get("temperature") == 0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ci95"] = list(self.ci95)
        for name in ("generation", "options"):
            if data[name] is None:
                del data[name]
        return data

    def not_comparable_with(self, other: BenchmarkScore) -> str | None:
        """Why two scores of one benchmark measure different things, or None: another
        version, primary metric, generation settings or options (where both rows kept them)."""
        if self.version != other.version:
            return f"version {self.version} → {other.version}"
        if self.primary != other.primary:
            return f"primary metric {self.primary} → {other.primary}"
        for name in ("generation", "options"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine is not None and theirs is not None and mine != theirs:
                changed = sorted(k for k in {*mine, *theirs} if mine.get(k) != theirs.get(k))
                return f"{name} changed ({', '.join(changed)})"
        return None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BenchmarkScore:
        """A score from a row's benchmark entry (or a results entry with value and ci95 set)."""
        lo, hi = data["ci95"]
        return cls(
            version=data["version"],
            n=data["n"],
            primary=data["primary"],
            value=float(data["value"]),
            ci95=(float(lo), float(hi)),
            parse_failures=data.get("parse_failures", 0),
            generation=data.get("generation"),
            options=data.get("options"),
        )


@dataclass(frozen=True)
class Provenance:
    """How a row was made: the command, the code's commit, the run folder and the host."""

    command: str
    git_commit: str | None
    results_dir: str | None
    host: str

    @classmethod
    def collect(
        cls, command: str | None = None, results_dir: str | Path | None = None
    ) -> Provenance:
        """Provenance of this process: its command line, the checkout's commit, this host."""
        argv = [Path(sys.argv[0]).name, *sys.argv[1:]]
        return cls(
            command=command if command is not None else shlex.join(argv),
            git_commit=git_commit(Path.cwd()),
            results_dir=None if results_dir is None else str(results_dir),
            host=socket.gethostname(),
        )


@dataclass(frozen=True)
class Row:
    label: str
    created: str
    checkpoint: dict[str, Any]
    spade_version: str
    settings: dict[str, Any]
    benchmarks: dict[str, BenchmarkScore]
    samples: dict[str, dict[str, float]]
    """Per benchmark, `{sample_id: score}`; a benchmark may be absent (no samples kept)."""
    provenance: Provenance
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per benchmark, `{sample_id: output digest}` (`run.json_digest`); absent in rows
    stored before digests were kept."""
    answers: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per benchmark, `{sample_id: digest of the extracted answer}`; absent likewise."""
    sample_metrics: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """Per benchmark, per secondary metric the samples report (e.g. `return`), `{sample_id:
    value}`: what deltas on a metric other than the primary pair on; absent likewise."""

    def tolerance_floor(self, benchmark: str) -> float | None:
        """The gate's tolerance floor for `benchmark` from `settings.tolerances`, if set."""
        value = self.settings.get("tolerances", {}).get(benchmark)
        return None if value is None else float(value)

    def changed_sample_limit(self, benchmark: str) -> int | None:
        """How many changed samples the gate lets `benchmark` have, from
        `settings.max_changed_samples`, if set."""
        value = self.settings.get("max_changed_samples", {}).get(benchmark)
        return None if value is None else int(value)

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "created": self.created,
            "checkpoint": self.checkpoint,
            "spade_version": self.spade_version,
            "settings": self.settings,
            "benchmarks": {name: score.to_json() for name, score in self.benchmarks.items()},
            "samples": self.samples,
            "outputs": self.outputs,
            "answers": self.answers,
            "sample_metrics": self.sample_metrics,
            "provenance": asdict(self.provenance),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Row:
        """A row from JSON that already passed the leaderboard schema."""
        return cls(
            label=data["label"],
            created=data["created"],
            checkpoint=dict(data["checkpoint"]),
            spade_version=data["spade_version"],
            settings=dict(data["settings"]),
            benchmarks={k: BenchmarkScore.from_json(v) for k, v in data["benchmarks"].items()},
            samples={k: {i: float(s) for i, s in v.items()} for k, v in data["samples"].items()},
            provenance=Provenance(**{k: data["provenance"][k] for k in _PROVENANCE_FIELDS}),
            outputs={k: dict(v) for k, v in data.get("outputs", {}).items()},
            answers={k: dict(v) for k, v in data.get("answers", {}).items()},
            sample_metrics={
                name: {m: {i: float(x) for i, x in values.items()} for m, values in by.items()}
                for name, by in data.get("sample_metrics", {}).items()
            },
        )


_PROVENANCE_FIELDS = ("command", "git_commit", "results_dir", "host")


def row_from_run(run: RunResults, label: str, provenance: Provenance | None = None) -> Row:
    """The leaderboard row for a run; `provenance` defaults to this process's.

    `created` is the run's own time stamp (when the scores were measured), else now. Only the
    primary metric of each benchmark is kept, with the samples of benchmarks the run reports and
    their values of the benchmark's other reported metrics (`sample_metrics`).
    Raises `LeaderboardError` when the results lack a field the row needs.
    """
    where = str(run.results_dir / "results.json") if run.results_dir else "results"
    run.check(where)
    results = run.results
    benchmarks = {}
    for name, entry in results["benchmarks"].items():
        metric = entry["metrics"][entry["primary"]]
        lo, hi = metric["ci95"]
        if not all(math.isfinite(x) for x in (metric["value"], lo, hi)):
            where_metric = f"benchmarks.{name}.metrics.{entry['primary']}"
            raise LeaderboardError(f"{where}: {where_metric}: value and ci95 must be finite")
        # A results entry keeps value and ci95 under its primary metric, a row beside the rest.
        flat = {**entry, "value": metric["value"], "ci95": metric["ci95"]}
        benchmarks[name] = BenchmarkScore.from_json(flat)
    if provenance is None:
        provenance = Provenance.collect(results_dir=run.results_dir)
    row = Row(
        label=label,
        created=results.get("created") or datetime.now(UTC).isoformat(timespec="seconds"),
        checkpoint=dict(results["checkpoint"]),
        spade_version=results.get("spade_version", "unknown"),
        settings=dict(results.get("settings", {})),
        benchmarks=benchmarks,
        samples={name: dict(run.samples[name]) for name in benchmarks if name in run.samples},
        provenance=provenance,
        outputs={name: dict(run.outputs[name]) for name in benchmarks if name in run.outputs},
        answers={name: dict(run.answers[name]) for name in benchmarks if name in run.answers},
        sample_metrics=_reported_sample_metrics(run, benchmarks),
    )
    # The row must load back: check it against the file format now, not at the next load.
    data = row.to_json()
    errors = schema_errors(without_scores(data), _row_schema()) + score_errors(data, "")
    raise_first(f"row {label!r} from {where}", errors)
    return row


def _reported_sample_metrics(
    run: RunResults, benchmarks: dict[str, BenchmarkScore]
) -> dict[str, dict[str, dict[str, float]]]:
    """Per benchmark, the per-sample values of the metrics its results report besides the
    primary: a metric only some samples carry, or none of the results name, is not kept. (One
    that equals the primary on this run's samples is kept: on another run it may not.)"""
    kept = {}
    for name, score in benchmarks.items():
        reported = run.results["benchmarks"][name]["metrics"]
        scores = run.samples.get(name, {})
        by_metric = {
            metric: dict(values)
            for metric, values in run.metrics.get(name, {}).items()
            if metric != score.primary and metric in reported and set(values) == set(scores)
        }
        if by_metric:
            kept[name] = by_metric
    return kept


def as_row(current: RunResults | Row) -> Row:
    """`current` as a row, for comparisons: a run gets a blank provenance (it is not stored)."""
    if isinstance(current, Row):
        return current
    results_dir = None if current.results_dir is None else str(current.results_dir)
    return row_from_run(current, CURRENT_LABEL, Provenance("", None, results_dir, ""))


def git_commit(start: Path) -> str | None:
    """The commit checked out at or above `start`, read from `.git` (no git binary needed)."""
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_file():  # a worktree or submodule: `gitdir: PATH`
                text = dot_git.read_text(encoding="utf-8").strip()
                return _resolve_head((folder / text.removeprefix("gitdir:").strip()).resolve())
        except (OSError, UnicodeDecodeError):
            return None
        if dot_git.is_dir():
            return _resolve_head(dot_git)
    return None


def _resolve_head(git_dir: Path) -> str | None:
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head or None
        ref = head.removeprefix("ref:").strip()
        common = git_dir
        if (git_dir / "commondir").is_file():  # worktrees keep branch refs in the main repo
            common = (git_dir / (git_dir / "commondir").read_text("utf-8").strip()).resolve()
        for base in (git_dir, common):
            if (base / ref).is_file():
                return (base / ref).read_text(encoding="utf-8").strip() or None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                sha, _, name = line.partition(" ")
                if name == ref:
                    return sha
    except (OSError, UnicodeDecodeError):
        return None
    return None  # an unborn branch: no commit yet


def _row_schema() -> dict[str, Any]:
    schema = leaderboard_schema()
    return {"$defs": schema["$defs"], "$ref": "#/$defs/row"}
