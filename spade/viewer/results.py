"""A spade-eval results directory as page data: summary, samples, and a comparison.

`DIR/results.json` gives each benchmark's summary; `DIR/samples/*.jsonl` the per-sample
records (`SampleResult.as_dict()`), grouped by each record's own `benchmark` field, so file
naming does not matter and benchmarks with records but no summary still show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from spade.evals.stats import paired_delta
from spade.viewer.errors import ViewError
from spade.viewer.records import read_json, read_jsonl
from spade.viewer.sections import (
    Section,
    as_dict,
    chat_section,
    fields_section,
    is_chat,
    pretty_json,
    preview,
    value_section,
)
from spade.viewer.strings import StringTable

RESULTS_FILE = "results.json"


@dataclass
class ResultsDir:
    path: Path
    document: dict[str, Any]
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Benchmark name -> its records, in file order."""

    def names(self) -> list[str]:
        return list(dict.fromkeys([*self.document.get("benchmarks", {}), *self.samples]))


def is_results_dir(path: Path) -> bool:
    return (path / RESULTS_FILE).is_file()


def load_results(path: Path) -> ResultsDir:
    document = read_json(path / RESULTS_FILE)
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), dict):
        raise ViewError(f"{path / RESULTS_FILE}: not a spade-eval results file (no 'benchmarks')")
    results = ResultsDir(path, document)
    for file in sorted((path / "samples").glob("*.jsonl")):
        for number, record in enumerate(read_jsonl(file), 1):
            if not isinstance(record.get("benchmark"), str) or "sample_id" not in record:
                raise ViewError(f"{file} record {number}: no 'benchmark' or 'sample_id'")
            results.samples.setdefault(record["benchmark"], []).append(record)
    return results


def _score(record: dict[str, Any]) -> float | None:
    score = record.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return None
    return float(score) if math.isfinite(score) else None


def _score_text(record: dict[str, Any]) -> str:
    score = _score(record)
    return f"{score:.3f}" if score is not None else str(record.get("score"))


def _holds_episode(prompt: Any) -> TypeGuard[list[dict[str, Any]]]:
    """BFCL keeps its whole played conversation (calls and results) as the prompt."""
    return is_chat(prompt) and any(m["role"] == "tool" or m.get("tool_calls") for m in prompt)


def sample_sections(record: dict[str, Any], strings: StringTable) -> list[Section]:
    extra = as_dict(record.get("extra"))
    parsed = "yes" if record.get("parsed", True) else "no (counted as a parse failure)"
    facts = [
        ("benchmark", record.get("benchmark")),
        ("sample id", str(record.get("sample_id"))),
        ("score", _score_text(record)),
        ("parsed", parsed),
    ]
    sections = [fields_section("Sample", facts, strings)]
    prompt = record.get("prompt")
    if _holds_episode(prompt):
        sections.append(chat_section("Episode", prompt, strings, number_steps=True))
    elif prompt is not None:
        sections.append(value_section("Prompt", prompt, strings))
    transcript, rewards = extra.get("transcript"), extra.get("rewards")
    if is_chat(transcript):
        per_step = rewards if isinstance(rewards, list) else None
        sections.append(chat_section("Episode", transcript, strings, per_step, number_steps=True))
    for title, key in (("Output", "output"), ("Extracted answer", "answer"), ("Target", "target")):
        if record.get(key) is not None:
            sections.append(value_section(title, record[key], strings))
    metrics = as_dict(record.get("metrics"))
    if metrics:
        sections.append(fields_section("Metrics", list(metrics.items()), strings))
    rest = {k: v for k, v in extra.items() if not (k == "transcript" and is_chat(v))}
    if rest:
        sections.append({"t": "Extra", "k": "json", "v": strings.add(pretty_json(rest))})
    return sections


def _output_text(value: Any) -> str:
    return value if isinstance(value, str) else preview(value, limit=4000)


def sample_row(record: dict[str, Any], strings: StringTable) -> list[Any]:
    """`[sample id, score, answer, target, parsed, output text]` for the table and filters."""
    return [
        str(record.get("sample_id")),
        _score(record),
        preview(record.get("answer")),
        preview(record.get("target")),
        bool(record.get("parsed", True)),
        strings.add(_output_text(record.get("output"))),
    ]


def _metric_rows(entry: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for name, metric in entry.get("metrics", {}).items():
        if isinstance(metric, dict):
            low, high = (list(metric.get("ci95") or []) + [None, None])[:2]
            rows.append([name, metric.get("value"), low, high])
    return rows


def _primary(entry: dict[str, Any]) -> dict[str, Any]:
    return as_dict(as_dict(entry.get("metrics")).get(str(entry.get("primary"))))


def benchmark_data(name: str, results: ResultsDir, strings: StringTable) -> dict[str, Any]:
    entry = as_dict(results.document["benchmarks"].get(name))
    records = results.samples.get(name, [])
    primary = _primary(entry)
    settings = {k: entry[k] for k in ("generation", "data_sha256") if k in entry}
    return {
        "name": name,
        "summary": bool(entry),
        "version": entry.get("version"),
        "n": entry.get("n", len(records)),
        "primary": entry.get("primary", "score"),
        "value": primary.get("value"),
        "ci": primary.get("ci95"),
        "parse_failures": entry.get("parse_failures"),
        "seconds": entry.get("seconds"),
        "metrics": _metric_rows(entry),
        "settings": strings.add(pretty_json(settings)),
        "rows": [sample_row(r, strings) for r in records],
        "details": [sample_sections(r, strings) for r in records],
    }


def checkpoint_fields(document: dict[str, Any]) -> list[list[str]]:
    checkpoint, settings = as_dict(document.get("checkpoint")), as_dict(document.get("settings"))
    pairs = [
        *((f"checkpoint {k}", v) for k, v in checkpoint.items()),
        ("created", document.get("created")),
        ("spade version", document.get("spade_version")),
        ("preset", settings.get("preset")),
        ("limit", settings.get("limit")),
        ("command", settings.get("command")),
    ]
    return [[k, str(v)] for k, v in pairs if v is not None]


def _scores(records: list[dict[str, Any]]) -> dict[str, float]:
    return {str(r["sample_id"]): s for r in records if (s := _score(r)) is not None}


def compare_data(
    name: str, here: ResultsDir, there: ResultsDir, strings: StringTable
) -> dict[str, Any]:
    """Samples of one benchmark whose score differs between `here` and `there`, with Δ =
    here − there (paired over shared ids) as `spade-eval --baseline` reports it."""
    mine = {str(r["sample_id"]): r for r in here.samples.get(name, [])}
    theirs = {str(r["sample_id"]): r for r in there.samples.get(name, [])}
    order = {sample_id: index for index, sample_id in enumerate(mine)}
    before, after = _scores(list(theirs.values())), _scores(list(mine.values()))
    scored = [i for i in after if i in before]
    changed = [i for i in scored if after[i] != before[i]]
    other = _primary(as_dict(there.document["benchmarks"].get(name)))
    delta = None
    if scored:
        paired = paired_delta({i: before[i] for i in scored}, {i: after[i] for i in scored})
        delta = {
            "value": paired.delta,
            "ci": [paired.lo, paired.hi],
            "p": paired.p_value,
            "method": paired.method,
            "n": paired.n_common,
        }
    return {
        "other_value": other.get("value"),
        "other_ci": other.get("ci95"),
        "delta": delta,
        "up": sum(after[i] > before[i] for i in changed),
        "down": sum(after[i] < before[i] for i in changed),
        "same": len(scored) - len(changed),
        "only_here": sum(i not in theirs for i in mine),
        "only_there": sum(i not in mine for i in theirs),
        # [sample id, score here, score there, index of its detail here, index of it there]
        "rows": [[i, after[i], before[i], order[i], n] for n, i in enumerate(changed)],
        "details": [sample_sections(theirs[i], strings) for i in changed],
    }


def results_page(
    results: ResultsDir, strings: StringTable, other: ResultsDir | None = None
) -> dict[str, Any]:
    benchmarks = []
    for name in results.names():
        data = benchmark_data(name, results, strings)
        if other is not None and name in other.names():
            data["compare"] = compare_data(name, results, other, strings)
        benchmarks.append(data)
    page: dict[str, Any] = {
        "kind": "results",
        "title": f"spade-eval results: {results.path.name}",
        "path": str(results.path),
        "checkpoint": checkpoint_fields(results.document),
        "benchmarks": benchmarks,
    }
    if other is not None:
        page["other"] = {
            "path": str(other.path),
            "checkpoint": checkpoint_fields(other.document),
            "only_there": [n for n in other.names() if n not in results.names()],
        }
    return page
