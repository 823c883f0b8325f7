"""Presets: a list takes each declaration's own slice for that preset; a mapping sets sizes."""

from __future__ import annotations

from pathlib import Path

from spade.evals.benchmark import build_benchmark
from spade.evals.declarations import BENCHMARKS_DIR
from spade.evals.run import choose_ids, load_presets, preset_sizes, resolve_benchmarks
from tests.data import DATA_DIR


def test_a_mapping_preset_sets_each_benchmarks_slice_size() -> None:
    declarations, preset = resolve_benchmarks(None, "learning")
    sizes = preset_sizes(preset)
    assert [d.name for d in declarations] == list(sizes) == load_presets()["learning"]
    for declaration in declarations:
        benchmark = build_benchmark(declaration)
        all_ids = benchmark.sample_ids(DATA_DIR)
        ids = choose_ids(declaration, benchmark, all_ids, preset, None)
        assert len(ids) == sizes[declaration.name]
        limited = choose_ids(declaration, benchmark, all_ids, preset, 3)
        assert limited == choose_ids(declaration, benchmark, all_ids, "quick", 3)  # --limit wins


def test_a_list_preset_keeps_the_declarations_own_slices(tmp_path: Path) -> None:
    assert preset_sizes("quick") == {} and preset_sizes(None) == {}
    (declaration,), preset = resolve_benchmarks(["games"], "quick")
    benchmark = build_benchmark(declaration)
    ids = choose_ids(declaration, benchmark, benchmark.sample_ids(None), preset, None)
    assert len(ids) == declaration.slices.quick
    assert (BENCHMARKS_DIR / "presets.yaml").is_file()
