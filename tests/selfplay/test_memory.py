"""Environment memory: bounded FIFO, persistence, what the designer is shown, freezing a run."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from spade.selfplay.memory import (
    EXCERPT_MARKER,
    ColdStartEnv,
    EnvMemory,
    MemoryEntry,
    MemoryFileError,
    MemorySampling,
    cold_start_envs,
    excerpt,
    memory_table,
    new_entry_id,
    sample_context,
)
from spade.suites import SEED_ENVS_DIR, FreezeOptions, freeze_suite

REPO = Path(__file__).resolve().parents[2]
HIDDEN_NUMBER = (SEED_ENVS_DIR / "hidden_number.py").read_text()
CAPPED_NIM = (SEED_ENVS_DIR / "capped_nim.py").read_text()
FIELDS = {
    "id", "source", "kind", "skill", "difficulty", "document_id", "win_rate", "regret", "step",
    "hint", "created_step",
}  # fmt: skip


def entry(
    entry_id: str, win_rate: float = 0.5, regret: float = 0.1, source: str = "", step: int = 1
) -> MemoryEntry:
    return MemoryEntry(
        id=entry_id,
        source=source or f'"""Env {entry_id}."""\n\nclass {entry_id.capitalize()}Env:\n    pass\n',
        kind="game",
        skill="search",
        difficulty="easy",
        document_id=f"doc/{entry_id}",
        win_rate=win_rate,
        regret=regret,
        step=step,
        hint="Halve the interval.",
        created_step=step,
    )


def test_memory_is_a_bounded_fifo_with_unique_ids() -> None:
    memory = EnvMemory(capacity=3)
    evicted = [memory.add(entry(f"e{i}", step=i)) for i in range(5)]
    assert [e.id for e in memory] == ["e2", "e3", "e4"]
    assert [e.id if e else None for e in evicted] == [None, None, None, "e0", "e1"]
    assert "e3" in memory and "e0" not in memory
    with pytest.raises(ValueError, match="already holds an env with id 'e3'"):
        memory.add(entry("e3"))
    updated = memory.update("e3", win_rate=0.9, regret=0.0, step=7)
    assert (updated.win_rate, updated.step, updated.created_step) == (0.9, 7, 3)
    assert [e.id for e in memory] == ["e2", "e3", "e4"]  # re-measuring keeps the FIFO order
    with pytest.raises(KeyError):
        memory.update("e0", win_rate=0.1, regret=0.0, step=7)


def test_entries_are_validated() -> None:
    with pytest.raises(ValueError, match="'win_rate' must be a number in"):
        entry("a", win_rate=1.2)
    with pytest.raises(ValueError, match="'regret' must be a number in"):
        entry("a", regret=float("nan"))
    with pytest.raises(ValueError, match="'step' must be a non-negative integer"):
        entry("a", step=-1)
    assert new_entry_id(42, 3) == "s000042_03"


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    memory = EnvMemory(capacity=10, entries=[entry("a", 0.1), entry("b", 0.5, step=2)])
    path = memory.save(tmp_path / "run")
    assert path == tmp_path / "run" / "memory.json"
    assert [p.name for p in path.parent.iterdir()] == ["memory.json"]  # no temp files left
    data = json.loads(path.read_text())
    assert isinstance(data, list) and all(set(item) == FIELDS for item in data)
    loaded = EnvMemory.load(tmp_path / "run", capacity=10)
    assert loaded.entries == memory.entries
    assert [e.id for e in EnvMemory.load(tmp_path / "run", capacity=1)] == ["b"]  # newest kept
    assert len(EnvMemory.load(tmp_path / "new-run")) == 0


def test_load_accepts_entries_without_created_step(tmp_path: Path) -> None:
    item = entry("a", step=4).to_json()
    del item["created_step"]
    (tmp_path / "memory.json").write_text(json.dumps([item]))
    assert EnvMemory.load(tmp_path).entries[0].created_step == 4


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, ", "not valid JSON"),
        ('{"id": "a"}', "expected a JSON list"),
        ("[{}]", "entry 0: missing field(s) id, source"),
        ("BAD_WIN_RATE", "entry 1: 'win_rate' must be a number in [0, 1], not 'high'"),
        ("DUPLICATE", "memory already holds an env with id 'a'"),
    ],
)
def test_a_malformed_memory_file_is_named(tmp_path: Path, content: str, message: str) -> None:
    good = entry("a").to_json()
    if content == "BAD_WIN_RATE":
        content = json.dumps([good, {**good, "id": "b", "win_rate": "high"}])
    elif content == "DUPLICATE":
        content = json.dumps([good, good])
    (tmp_path / "memory.json").write_text(content)
    with pytest.raises(MemoryFileError) as caught:
        EnvMemory.load(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'memory.json'}: ")
    assert message in str(caught.value)


def banded_memory() -> EnvMemory:
    return EnvMemory(
        entries=[
            entry("hard", win_rate=0.05, regret=0.4),
            entry("edge_low", win_rate=0.15, regret=0.0),
            entry("high_regret", win_rate=0.5, regret=0.35, source=HIDDEN_NUMBER),
            entry("low_regret", win_rate=0.6, regret=0.0),
            entry("edge_high", win_rate=0.85, regret=-0.1),
            entry("easy", win_rate=0.95, regret=0.3, source=CAPPED_NIM),
        ]
    )


def test_references_come_from_the_band_and_prefer_high_regret() -> None:
    memory = banded_memory()
    in_band = {"edge_low", "high_regret", "low_regret", "edge_high"}
    counts: dict[str, int] = {}
    for seed in range(400):
        context = sample_context(memory, random.Random(seed), sampling=MemorySampling(references=1))
        (reference,) = context.references
        assert reference.id in in_band and context.cold_start == 0
        counts[reference.id] = counts.get(reference.id, 0) + 1
    # Weights max(regret, 0) + 0.05: 0.40 of 0.55 in total goes to high_regret (~73%).
    assert counts["high_regret"] > 0.6 * 400
    assert all(counts.get(name, 0) > 0 for name in in_band)  # ε keeps the others possible
    pair = sample_context(memory, random.Random(1)).references
    assert len(pair) == 2 and len({r.id for r in pair}) == 2


def test_the_negative_line_names_an_env_outside_the_band() -> None:
    memory = banded_memory()
    reasons = {}
    for seed in range(50):
        negative = sample_context(memory, random.Random(seed)).negative
        assert negative is not None
        reasons[negative.id] = negative.reason
    assert reasons == {"hard": "too hard", "easy": "too easy"}
    easy = next(
        n
        for seed in range(50)
        if (n := sample_context(memory, random.Random(seed)).negative) and n.id == "easy"
    )
    assert easy.line() == (
        'Avoid environments like CappedNimEnv (skill: search; "'
        + CAPPED_NIM.split('"""')[1].splitlines()[0]
        + '"): too easy (solved in 95% of plays without the hint).'
    )
    assert sample_context(EnvMemory(entries=[entry("a")]), random.Random(0)).negative is None


def test_sampling_is_reproducible_with_a_seeded_rng() -> None:
    memory = banded_memory()
    pool = [ColdStartEnv(f"seed/{i}", f"class S{i}Env: pass\n", "game", "x") for i in range(5)]

    def draw(seed: int) -> list[object]:
        rng = random.Random(seed)
        return [sample_context(memory, rng, pool) for _ in range(5)]

    assert draw(3) == draw(3)
    assert draw(3) != draw(4)


def test_reference_excerpts_are_cut_at_a_line_boundary() -> None:
    long_source = "".join(f"line_{i} = {i}  # padding padding padding\n" for i in range(200))
    memory = EnvMemory(entries=[entry("long", source=long_source)])
    (reference,) = sample_context(memory, random.Random(0)).references
    assert reference.win_rate == 0.5 and reference.regret == 0.1
    assert len(reference.excerpt) <= 2000
    head, marker = reference.excerpt.rsplit("\n", 1)
    assert marker == EXCERPT_MARKER
    assert long_source.startswith(head + "\n")  # whole lines only
    assert excerpt("short\n") == "short\n"
    assert len(excerpt("x" * 5000, 100)) <= 100  # one giant line: a hard cut


def test_cold_start_references_fill_in_until_memory_has_envs_in_band() -> None:
    pool = [
        ColdStartEnv("seed/A-v1", "class AEnv: pass\n", "game", "search"),
        ColdStartEnv("seed/B-v1", "class BEnv: pass\n", "game", "logic"),
        ColdStartEnv("seed/T-v1", "class TEnv: pass\n", "tool_use", "booking"),
    ]
    empty = sample_context(EnvMemory(), random.Random(0), pool, kind="game")
    assert {r.id for r in empty.references} == {"seed/A-v1", "seed/B-v1"}
    assert all(r.win_rate is None and r.regret is None for r in empty.references)
    assert empty.cold_start == 2
    one = EnvMemory(entries=[entry("mine"), entry("too_easy", win_rate=1.0)])
    mixed = sample_context(one, random.Random(0), pool, kind="game")
    assert mixed.references[0].id == "mine" and mixed.cold_start == 1
    tools = sample_context(one, random.Random(0), pool, kind="tool_use")
    assert [r.id for r in tools.references] == ["seed/T-v1"] and tools.negative is None


def test_cold_start_envs_come_from_the_frozen_seed_suite() -> None:
    envs = cold_start_envs(root=REPO / "envs_snapshots")
    assert len(envs) == 22  # spade-seed@1.2.0's train split
    assert {env.kind for env in envs} == {"game", "reasoning", "tool_use"}
    number = next(env for env in envs if env.id == "spade-seed/HiddenNumberEnv-v1")
    frozen = REPO / "envs_snapshots/spade-seed/1.2.0/envs/hidden_number.py"
    assert number.source == frozen.read_text() and number.skill == "search"
    assert all(env.hint for env in envs)  # replayed cold-start envs measure regret too
    assert {env.levels for env in envs} == {5}  # replays are played at scheduled levels


def test_memory_table() -> None:
    assert memory_table(EnvMemory()) == "memory is empty"
    memory = banded_memory()
    memory.update("easy", win_rate=0.95, regret=0.3, step=9)
    table = memory_table(memory)
    assert table.splitlines()[0].startswith("| id ")
    for needle in ("high_regret", "too hard", "too easy", "in band", "+0.35", "1→9", "6/200 envs"):
        assert needle in table


def test_a_saved_memory_freezes_into_a_suite(tmp_path: Path) -> None:
    run = tmp_path / "run"
    memory = EnvMemory()
    memory.add(replace(entry(new_entry_id(3, 0), 0.45, 0.2, HIDDEN_NUMBER, step=3), skill="x"))
    memory.add(replace(entry(new_entry_id(5, 1), 0.6, 0.05, CAPPED_NIM, step=5), hint="h"))
    memory.save(run)
    options = FreezeOptions(eval_seeds=3, check_seeds=2, created="2026-01-01T00:00:00Z")
    report = freeze_suite([run], "run-test", "0.1.0", root=tmp_path / "suites", options=options)
    assert not report.rejected and not report.duplicates
    first, second = report.manifest.envs
    assert first.file == "envs/s000003_00.py" and first.source_document == "doc/s000003_00"
    assert first.provenance == {
        "memory_id": "s000003_00", "step": 3, "win_rate": 0.45, "regret": 0.2
    }  # fmt: skip
    assert (report.path / first.file).read_text() == HIDDEN_NUMBER
    assert second.class_name == "CappedNimEnv"
