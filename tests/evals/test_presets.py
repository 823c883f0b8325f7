"""Presets: a list takes each declaration's own slice for that preset; a mapping sets sizes,
generation settings and options."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spade.evals.benchmark import build_benchmark
from spade.evals.declarations import BENCHMARKS_DIR, DeclarationError
from spade.evals.presets import load_presets, preset_entries, preset_sizes
from spade.evals.run import choose_ids, resolve_benchmarks
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


def test_quick_shortens_the_multi_turn_episodes_and_leaves_the_rest() -> None:
    """The README's main command fits in minutes on 2 cores: its multi-turn entries take
    shorter replies and fewer turns than their declarations; every other benchmark runs as
    declared."""
    quick, _ = resolve_benchmarks(None, "quick")
    declared = {d.name: d for d in resolve_benchmarks([d.name for d in quick], None)[0]}
    changed = {d.name for d in quick if d != declared[d.name]}
    assert changed == {"acebench_agent", "suite:spade-seed@1.0.0",
                       "suite:spade-seed@1.1.0:heldout"}  # fmt: skip
    by_name = {d.name: d for d in quick}
    heldout = by_name["suite:spade-seed@1.1.0:heldout"]
    assert heldout.generation.max_gen_toks == 64
    assert heldout.options == {"split": "heldout", "turn_cap": 20}
    ace = by_name["acebench_agent"]
    assert (ace.generation.max_gen_toks, ace.options["user_max_gen_toks"]) == (128, 64)
    assert declared["acebench_agent"].options["max_dialog_turns"] == 40
    assert ace.options["max_dialog_turns"] == 20


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("gsm8k: {generation: {max_gen_toks: 0}}",
         "presets.yaml: gsm8k: generation.max_gen_toks: Input should be greater than or equal"),
        ("gsm8k: {generations: {}}", "presets.yaml: mine: gsm8k: generations: Extra inputs"),
        ("gsm8k: {n: many}", "presets.yaml: mine: gsm8k: n: Input should be a valid integer"),
    ],
)  # fmt: skip
def test_a_bad_preset_entry_is_a_one_line_error(tmp_path: Path, entry: str, message: str) -> None:
    (tmp_path / "presets.yaml").write_text(f"mine:\n  {entry}\n")
    with pytest.raises(DeclarationError, match=re.escape(message)):
        for name, settings in preset_entries("mine", tmp_path).items():
            (declaration,), _ = resolve_benchmarks([name], None)
            settings.apply(declaration)
