"""A spade-train run directory as page data: curves, iterations, designs, memory, episodes.

Reads `config.yaml`, `metrics.jsonl` and `designs.jsonl` (spade.selfplay.run_log),
`memory.json` (spade.selfplay.memory) and, when the run wrote them, sample episodes in
`episodes.jsonl`, one object per episode:
`{"step", "env", "seed", "hinted": bool, "transcript": [chat messages], "rewards": [one per
agent turn], "return", "terminated", "truncated", "error", "hint"}` (the last five optional).

A design record may carry `env_id` (its memory id), `win_rate`, `regret` and `code`; those
win. Without them the env's code is extracted from the reply and its win rate and regret come
from its memory entry, found by the loop's numbering of accepted designs.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from spade.selfplay.designer import extract_code
from spade.selfplay.memory import new_entry_id
from spade.selfplay.run_log import CURVES
from spade.suites.sources import MEMORY_FILE
from spade.viewer.errors import ViewError
from spade.viewer.records import read_json, read_jsonl
from spade.viewer.sections import Section, as_dict, chat_section, fields_section, preview
from spade.viewer.strings import StringTable

RUN_FILES = ("metrics.jsonl", "designs.jsonl", "config.yaml")
EPISODES_FILE = "episodes.jsonl"
ITERATION_COLUMNS = [  # (metric, column title, shown as a rate with three decimals)
    ("designer/candidates", "designs", False),
    ("designer/valid", "valid", False),
    ("designer/validity_rate", "validity", True),
    ("designer/groups_with_signal", "signal", True),
    ("envs/played", "envs played", False),
    ("envs/win_rate", "win rate", True),
    ("envs/regret", "regret", True),
    ("agent/return", "return", True),
    ("agent/progress", "progress", True),
    ("agent/truncated", "truncated", True),
    ("update/loss", "loss", True),
    ("levels/played_mean", "level played", True),
    ("levels/ceiling_mean", "ceiling", True),
    ("time/total", "seconds", False),
]


def is_run_dir(path: Path) -> bool:
    return any((path / name).is_file() for name in RUN_FILES)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _config(path: Path) -> tuple[dict[str, Any], str]:
    file = path / "config.yaml"
    if not file.is_file():
        return {}, ""
    try:
        text = file.read_text(encoding="utf-8")
        config = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ViewError(f"{file}: cannot read ({exc})") from None
    except yaml.YAMLError as exc:
        raise ViewError(f"{file}: not valid YAML ({' '.join(str(exc).split())})") from None
    return (config if isinstance(config, dict) else {}), text


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return read_jsonl(path) if path.is_file() else []


def _memory(path: Path) -> list[dict[str, Any]]:
    file = path / MEMORY_FILE
    if not file.is_file():
        return []
    entries = read_json(file)
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ViewError(f"{file}: expected a JSON list of memory entries")
    return entries


def _failures(record: dict[str, Any]) -> str:
    failures = record.get("designer/failures")
    if not isinstance(failures, dict):
        return ""
    return ", ".join(f"{name} ×{count}" for name, count in failures.items())


def iterations(metrics: list[dict[str, Any]]) -> list[list[Any]]:
    """Per iteration: the step, the columns of ITERATION_COLUMNS, the designer's failures."""
    return [
        [
            record.get("step"),
            *(_number(record.get(k)) for k, _, _ in ITERATION_COLUMNS),
            _failures(record),
        ]
        for record in metrics
    ]


def numeric_series(metrics: list[dict[str, Any]]) -> dict[str, list[list[float]]]:
    """Every numeric metric as `[[step, value], ...]` (non-finite values left out)."""
    series: dict[str, list[list[float]]] = {}
    for record in metrics:
        step = _number(record.get("step"))
        if step is None:
            continue
        for key, value in record.items():
            number = _number(value)
            if key != "step" and number is not None:
                series.setdefault(key, []).append([step, number])
    return series


def _joined_memory(
    designs: list[dict[str, Any]], memory: list[dict[str, Any]]
) -> list[dict[str, Any] | None]:
    """Each design's memory entry: by the record's own `env_id` when it names one, else the
    loop's numbering (the k-th accepted design of step s is entry `new_entry_id(s, k)`)."""
    by_id = {str(e.get("id")): e for e in memory}
    accepted: dict[Any, int] = {}
    joined: list[dict[str, Any] | None] = []
    for design in designs:
        if isinstance(design.get("env_id"), str):
            joined.append(by_id.get(design["env_id"]))
        elif design.get("valid") and isinstance(design.get("step"), int):
            serial = accepted.get(design["step"], 0)
            accepted[design["step"]] = serial + 1
            joined.append(by_id.get(new_entry_id(design["step"], serial)))
        else:
            joined.append(None)
    return joined


def _measured(design: dict[str, Any], entry: dict[str, Any], key: str) -> float | None:
    """The design record's own measurement when it has one, else its memory entry's."""
    own = _number(design.get(key))
    return own if own is not None else _number(entry.get(key))


Views = tuple[list[list[Any]], list[list[Section]]]
"""Table rows (their last cell: the text the page's filter searches) and detail sections."""


def _text(title: str, value: Any, strings: StringTable, kind: str = "text") -> Section:
    return {"t": title, "k": kind, "v": strings.add(str(value))}


def _search(strings: StringTable, *parts: Any) -> int:
    return strings.add("\n".join(str(p) for p in parts if p))


def design_views(
    designs: list[dict[str, Any]], memory: list[dict[str, Any]], strings: StringTable
) -> Views:
    """Rows `[step, group, kind, skill, difficulty, attempts, status, win rate, regret]`: status
    is `accepted` or the name of the check that rejected the design."""
    rows, details = [], []
    for design, entry in zip(designs, _joined_memory(designs, memory), strict=True):
        entry = entry or {}
        reply = str(design.get("reply") or "")
        code = design["code"] if isinstance(design.get("code"), str) else extract_code(reply)
        failure, hint = design.get("failure"), design.get("hint")
        status = "accepted" if design.get("valid") else str(failure or "rejected").split(":")[0]
        win_rate, regret = _measured(design, entry, "win_rate"), _measured(design, entry, "regret")
        facts = [
            *((k, design.get(k)) for k in ("step", "group", "kind", "skill", "difficulty")),
            ("document", design.get("document_id")),
            ("attempts", design.get("attempts")),
            ("status", status),
            ("memory id", entry.get("id") or design.get("env_id")),
            ("win rate (no hint)", win_rate),
            ("regret", regret),
            ("measured at step", entry.get("step")),
        ]
        rows.append(
            [
                *(design.get(k) for k in ("step", "group", "kind", "skill", "difficulty")),
                design.get("attempts"),
                status,
                win_rate,
                regret,
                _search(strings, failure, hint, design.get("document_id"), code),
            ]
        )
        sections = [fields_section("Design", facts, strings)]
        if failure:
            sections.append(_text("Failed check", failure, strings))
        if hint:
            sections.append(_text("Hint", hint, strings))
        if code:
            sections.append(_text("Code", code, strings, "code"))
        if reply.strip() and reply.strip() != (code or "").strip():
            sections.append(_text("Designer reply", reply, strings))
        if design.get("first_reply"):  # repaired: the designer's own first try and its failure
            sections.append(_text("First failed check", design.get("first_failure") or "", strings))
            sections.append(
                _text("First reply (before the repair)", design["first_reply"], strings)
            )
        details.append(sections)
    return rows, details


def _band(win_rate: float | None) -> str:
    """The memory's band (spade.selfplay.memory: references come from [0.15, 0.85])."""
    if win_rate is None:
        return ""
    return "too easy" if win_rate > 0.85 else "too hard" if win_rate < 0.15 else "in band"


def memory_views(memory: list[dict[str, Any]], strings: StringTable) -> Views:
    """Rows `[id, kind, skill, difficulty, win rate, regret, band, created step, step]`."""
    rows, details = [], []
    for entry in memory:
        win_rate, regret = _number(entry.get("win_rate")), _number(entry.get("regret"))
        band = _band(win_rate)
        rows.append(
            [
                *(entry.get(k) for k in ("id", "kind", "skill", "difficulty")),
                win_rate,
                regret,
                band,
                entry.get("created_step"),
                entry.get("step"),
                _search(strings, entry.get("hint"), entry.get("source")),
            ]
        )
        keys = ("id", "kind", "skill", "difficulty", "document_id", "win_rate", "regret")
        facts = [
            *((k, entry.get(k)) for k in keys),
            ("band", band),
            ("joined at step", entry.get("created_step")),
            ("measured at step", entry.get("step")),
        ]
        sections = [fields_section("Memory entry", facts, strings)]
        if entry.get("hint"):
            sections.append(_text("Hint", entry["hint"], strings))
        sections.append(_text("Code", entry.get("source", ""), strings, "code"))
        details.append(sections)
    return rows, details


def episode_views(episodes: list[dict[str, Any]], strings: StringTable) -> Views:
    """Rows `[step, env, seed, hinted, return, turns, index of the same play with the hint
    flipped (-1: none)]` and each episode's transcript with its per-turn rewards."""
    keys = [(e.get("step"), e.get("env"), e.get("seed"), bool(e.get("hinted"))) for e in episodes]
    position = {key: index for index, key in enumerate(keys)}
    rows, details = [], []
    for (step, env, seed, hinted), episode in zip(keys, episodes, strict=True):
        transcript = episode.get("transcript")
        messages = [
            m
            for m in (transcript if isinstance(transcript, list) else [])
            if isinstance(m, dict) and isinstance(m.get("role"), str)
        ]
        rewards = episode.get("rewards") if isinstance(episode.get("rewards"), list) else None
        turns = sum(m["role"] == "assistant" for m in messages)
        rows.append(
            [
                step,
                env,
                seed,
                hinted,
                _number(episode.get("return")),
                turns,
                position.get((step, env, seed, not hinted), -1),
                _search(strings, *(m.get("content") for m in messages)),
            ]
        )
        facts = [
            ("step", step),
            ("env", env),
            ("seed", seed),
            ("hint", "yes" if hinted else "no"),
            ("return", _number(episode.get("return"))),
            ("terminated", episode.get("terminated")),
            ("truncated", episode.get("truncated")),
            ("error", episode.get("error")),
            ("rewards", " ".join(map(preview, rewards)) if rewards else None),
        ]
        sections = [fields_section("Episode", facts, strings)]
        if hinted and episode.get("hint"):
            sections.append(_text("Hint", episode["hint"], strings))
        sections.append(chat_section("Transcript", messages, strings, rewards, number_steps=True))
        details.append(sections)
    return rows, details


def summary_fields(
    path: Path, config: dict[str, Any], metrics: list[dict[str, Any]]
) -> list[list[str]]:
    last = metrics[-1] if metrics else {}
    seconds = sum(_number(r.get("time/total")) or 0.0 for r in metrics)
    final = path / "final"
    pairs = [
        ("run dir", str(path)),
        ("model", config.get("model")),
        ("mode", config.get("mode")),
        ("designer reward", as_dict(config.get("reward")).get("kind")),
        ("iterations done", f"{len(metrics)} of {config.get('iterations', '?')}"),
        ("training time", f"{seconds:.1f} s" if metrics else None),
        ("final model", f"{final} (a HF model dir)" if final.is_dir() else "none yet"),
        ("last validity rate", last.get("designer/validity_rate")),
        ("last win rate", last.get("envs/win_rate")),
        ("last regret", last.get("envs/regret")),
    ]
    return [[k, preview(v)] for k, v in pairs if v is not None]


def run_page(path: Path, strings: StringTable) -> dict[str, Any]:
    config, config_text = _config(path)
    metrics = _jsonl(path / "metrics.jsonl")
    designs = _jsonl(path / "designs.jsonl")
    memory = _memory(path)
    episodes_file = path / EPISODES_FILE
    design_rows, design_details = design_views(designs, memory, strings)
    memory_rows, memory_details = memory_views(memory, strings)
    page: dict[str, Any] = {
        "kind": "run",
        "title": f"spade-train run: {path.name}",
        "path": str(path),
        "summary": summary_fields(path, config, metrics),
        "config": strings.add(config_text),
        "curves": [list(curve) for curve in CURVES],
        "series": numeric_series(metrics),
        "iteration_columns": [[title, rate] for _, title, rate in ITERATION_COLUMNS],
        "iterations": iterations(metrics),
        "designs": {"rows": design_rows, "details": design_details},
        "memory": {"rows": memory_rows, "details": memory_details},
        "episodes": None,
    }
    if episodes_file.is_file():
        rows, details = episode_views(read_jsonl(episodes_file), strings)
        page["episodes"] = {"rows": rows, "details": details}
    return page
