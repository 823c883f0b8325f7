"""Run declared benchmarks through a responder and write results records atomically."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

import spade
from spade.atomic import write_atomic
from spade.evals.benchmark import Benchmark, build_benchmark, seeded_slice
from spade.evals.declarations import BENCHMARKS_DIR, Declaration, DeclarationError, declarations
from spade.evals.presets import load_presets, preset_entries, preset_sizes
from spade.evals.samples import ProgressCallback, SampleResult
from spade.evals.stats import mean_ci
from spade.evals.suite_runner import PREFIX as SUITE_PREFIX
from spade.evals.suite_runner import suite_declaration
from spade.rollout import Responder

if TYPE_CHECKING:
    from spade.distributed import Shard

SCHEMA_VERSION = 1


@dataclass
class BenchmarkRun:
    declaration: Declaration
    samples: list[SampleResult]
    seconds: float
    data_sha256: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The results.json entry: version, n, primary metric and every metric with a CI."""
        metrics: dict[str, dict[str, Any]] = {}
        names = [self.declaration.primary] + sorted(
            {m for s in self.samples for m in s.metrics} - {self.declaration.primary}
        )
        for name in names:
            values = [
                s.score if name == self.declaration.primary else s.metrics.get(name)
                for s in self.samples
            ]
            present = [float(v) for v in values if v is not None]
            if present:
                mean, low, high = mean_ci(present)
                metrics[name] = {"value": mean, "ci95": [low, high]}
        return {
            "version": self.declaration.version,
            "n": len(self.samples),
            "primary": self.declaration.primary,
            "metrics": metrics,
            "parse_failures": sum(not s.parsed for s in self.samples),
            # Samples whose scoring its time limit still cut short after the retries (their
            # scores may be false 0s), and the retries that a cut-short attempt led to.
            "scoring_timeouts": sum(s.timed_out for s in self.samples),
            "scoring_retries": sum(s.scoring_retries for s in self.samples),
            "data_sha256": self.data_sha256,
            "generation": self.declaration.generation.model_dump(),
            "options": self.declaration.options,
            "seconds": round(self.seconds, 3),
        }


def resolve_benchmarks(
    names: list[str] | None, preset: str | None, directory: Path = BENCHMARKS_DIR
) -> tuple[list[Declaration], str | None]:
    """The declarations to run, from explicit names or a preset; one-line errors otherwise."""
    known = declarations(directory)
    if names is None:
        presets = load_presets(directory)
        preset = preset or "quick"
        if preset not in presets:
            raise DeclarationError(f"unknown preset {preset!r}; known: {', '.join(presets)}")
        names = presets[preset]
    known |= {n: suite_declaration(n) for n in names if n.startswith(SUITE_PREFIX)}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise DeclarationError(
            f"unknown benchmark {unknown[0]!r}; known: {', '.join(sorted(known))}"
        )
    entries = preset_entries(preset, directory)
    return [entries[n].apply(known[n]) if n in entries else known[n] for n in names], preset


def choose_ids(
    declaration: Declaration,
    benchmark: Benchmark,
    all_ids: list[str],
    preset: str | None,
    limit: int | None,
) -> list[str]:
    """The preset's (or --limit's) seeded slice; a benchmark may slice its own ids."""
    slices = declaration.slices
    sizes = preset_sizes(preset)
    size: int | None
    if limit is not None:
        size = limit
    elif declaration.name in sizes:
        size = sizes[declaration.name]
    else:
        size = getattr(slices, preset or "full", None)
    pick = getattr(benchmark, "slice_ids", None)  # e.g. BFCL: an equal share per category
    if pick is not None:
        picked: list[str] = pick(all_ids, size, slices.seed)
        return picked
    return seeded_slice(all_ids, size, slices.seed, slices.stratify)


def planned_ids(
    declaration: Declaration,
    data_dir: Path | None,
    ids: list[str] | None = None,
    preset: str | None = None,
    limit: int | None = None,
    benchmark: Benchmark | None = None,
) -> list[str]:
    """The ids `run_benchmark` would run (its data verified first): what a sharded run splits.
    `benchmark`: the declaration's, when the caller has built it already."""
    if data_dir is not None:
        declaration.verify_data(data_dir)
    if ids is not None:
        return ids
    benchmark = benchmark or build_benchmark(declaration)
    return choose_ids(declaration, benchmark, benchmark.sample_ids(data_dir), preset, limit)


def run_shard(
    declarations: Mapping[str, Declaration],
    data_dir: Path | None,
    respond: Responder,
    shard: Shard,
    progress: ProgressCallback,
) -> list[SampleResult]:
    """One shard of a sharded run, on a worker: its benchmark's runner on the shard's ids."""
    benchmark = build_benchmark(declarations[shard.task])
    return benchmark.run(list(shard.ids), respond, data_dir, progress)


def sharded_run(
    declaration: Declaration, samples: list[SampleResult], seconds: float, data_dir: Path | None
) -> BenchmarkRun:
    """The merged shards of one benchmark, as `run_benchmark` returns a local run."""
    hashes = declaration.data_hashes() if data_dir is not None else {}
    return BenchmarkRun(declaration, samples, seconds, hashes)


def run_benchmark(
    declaration: Declaration,
    respond: Responder,
    data_dir: Path | None,
    ids: list[str] | None = None,
    preset: str | None = None,
    limit: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> BenchmarkRun:
    """Run one benchmark on `ids` (or the preset's seeded slice)."""
    if data_dir is not None:
        declaration.verify_data(data_dir)
    benchmark = build_benchmark(declaration)
    if ids is None:
        ids = choose_ids(declaration, benchmark, benchmark.sample_ids(data_dir), preset, limit)
    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done += count
        if progress:
            progress(declaration.name, done, len(ids))

    advance(0)  # the bar shows its total before the first sample
    started = time.perf_counter()
    callback: ProgressCallback = advance
    samples = benchmark.run(ids, respond, data_dir, callback)
    hashes = declaration.data_hashes() if data_dir is not None else {}
    return BenchmarkRun(declaration, samples, time.perf_counter() - started, hashes)


def results_document(
    runs: list[BenchmarkRun],
    checkpoint: dict[str, Any],
    settings: dict[str, Any],
    critical_path: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """results.json; `critical_path` is `spade.rollout.Chains.summary()` of the run (None
    where nothing was generated here: saved predictions, or shards on Ray workers)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "spade_version": spade.__version__,
        "checkpoint": checkpoint,
        "settings": settings,
        "benchmarks": {run.declaration.name: run.summary() for run in runs},
        "critical_path": critical_path,
    }


def write_results(output: Path, document: dict[str, Any], runs: list[BenchmarkRun]) -> Path:
    """Write per-sample JSONL files, then results.json last, each via temp file + rename:
    a crash never leaves a half-written file, and results.json marks a complete run."""
    samples_dir = output / "samples"
    samples_dir.mkdir(parents=True, exist_ok=True)
    for run in runs:
        lines = b"".join(orjson.dumps(s.as_dict(), default=repr) + b"\n" for s in run.samples)
        write_atomic(samples_dir / f"{_safe(run.declaration.name)}.jsonl", lines)
    path = output / "results.json"
    write_atomic(path, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return path


def _safe(name: str) -> str:
    """A file name for a benchmark name (`suite:a@1.0.0` has characters best avoided)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
