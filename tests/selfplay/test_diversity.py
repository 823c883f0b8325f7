"""The near-duplicate guard against the real seed envs and edited copies of them."""

from __future__ import annotations

import itertools

import pytest

from spade.envs.scaffold import assemble
from spade.selfplay.diversity import find_near_duplicate, fingerprint, similarity
from spade.selfplay.memory import EnvMemory, MemoryEntry, excerpt
from spade.suites import SEED_ENVS_DIR

SEEDS = {path.stem: path.read_text() for path in sorted(SEED_ENVS_DIR.glob("*.py"))}
HIDDEN_NUMBER = SEEDS["hidden_number"]


def test_distinct_seed_envs_are_not_near_duplicates() -> None:
    pool = list(SEEDS.items())
    for name, source in pool:
        others = [(other, code) for other, code in pool if other != name]
        assert find_near_duplicate(source, others) is None, name
    worst = max(similarity(a, b) for (_, a), (_, b) in itertools.combinations(pool, 2))
    assert worst < 0.65


def test_same_code_up_to_comments_and_layout_is_an_exact_duplicate() -> None:
    edited = "# my env\n" + HIDDEN_NUMBER.replace('"""Guess a hidden', '"""Find a secret', 1)
    edited = edited.replace("        self.turns += 1\n", "\n        self.turns += 1  # count\n")
    found = find_near_duplicate(edited, [("a", SEEDS["capped_nim"]), ("mem1", HIDDEN_NUMBER)])
    assert found is not None and found.exact and found.of == "mem1"
    assert "duplicate of mem1" in found.reason()


def test_renamed_and_reworded_copy_is_a_near_duplicate() -> None:
    copy = (
        HIDDEN_NUMBER.replace("HiddenNumberEnv", "SecretIntegerEnv")
        .replace("[100, 200, 500]", "[50, 300, 1000]")
        .replace("too low", "below the target")
        .replace("self.lo", "self.low")
        .replace("guess", "g")
    )
    assert similarity(copy, HIDDEN_NUMBER) >= 0.8
    found = find_near_duplicate(copy, [("nim", SEEDS["capped_nim"]), ("num", HIDDEN_NUMBER)])
    assert found is not None and not found.exact and found.of == "num"
    assert "near-duplicate of num (similarity 0." in found.reason()
    assert find_near_duplicate(copy, [("num", HIDDEN_NUMBER)], threshold=0.99) is None


def test_guard_works_on_memory_sources_and_unparsable_code() -> None:
    memory = EnvMemory()
    for index, name in enumerate(("hidden_number", "lights_out")):
        memory.add(
            MemoryEntry(f"m{index}", SEEDS[name], "game", "s", "easy", "doc", 0.5, 0.1, 1, "", 1)
        )
    assert find_near_duplicate(HIDDEN_NUMBER, memory.sources()) is not None
    assert find_near_duplicate(SEEDS["minesweeper"], memory.sources()) is None
    # Unparsable code still compares (on raw tokens, so less closely than normalised ones).
    broken = HIDDEN_NUMBER + "\ndef broken(:\n"
    assert fingerprint(broken).normalised_sha256 is None
    assert find_near_duplicate(broken, memory.sources(), threshold=0.5) is not None
    with pytest.raises(ValueError, match="threshold"):
        find_near_duplicate(HIDDEN_NUMBER, [], threshold=0.0)


def test_scaffolded_envs_are_compared_by_their_designs() -> None:
    """Every scaffolded env starts with the same prelude; that must not make two different
    designs look alike, nor hide a repeated one."""
    a, b = HIDDEN_NUMBER, SEEDS["battleship"]
    assert similarity(assemble(a, "text"), assemble(b, "text")) == similarity(a, b)
    repeat = find_near_duplicate(assemble(a, "text"), [("known", a)])
    assert repeat is not None and repeat.exact
    assert excerpt(assemble(a, "text"), 10_000) == a
