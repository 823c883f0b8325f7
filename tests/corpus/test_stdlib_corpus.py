"""The default corpus: the installed Python's standard library documentation."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from spade.corpus import CorpusOptions, open_corpus, stdlib_cache_path, write_stdlib_corpus
from spade.corpus import stdlib as stdlib_module


def test_build_is_byte_identical_and_free_of_process_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPADE_TEST_CANARY", "canary-4f1d2a9e")  # must never reach the corpus
    count = write_stdlib_corpus(tmp_path / "a.jsonl")
    monkeypatch.setenv("PYTHONHASHSEED", "12345")
    write_stdlib_corpus(tmp_path / "b.jsonl")
    data = (tmp_path / "a.jsonl").read_bytes()
    assert data == (tmp_path / "b.jsonl").read_bytes()
    assert count == data.count(b"\n") >= 300
    assert b"canary-4f1d2a9e" not in data
    assert b" at 0x" not in data  # object addresses differ from run to run
    # Defaults that are live objects are elided: logging.shutdown's lists current handlers.
    assert b"shutdown(handlerList=...)" in data


def test_open_stdlib_builds_once_into_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPADE_CACHE_DIR", str(tmp_path))
    corpus = open_corpus(None)
    path = stdlib_cache_path()
    assert path.parent == tmp_path / "corpus" and path.is_file()
    assert f"py{sys.version_info.major}.{sys.version_info.minor}." in path.name
    json_doc = corpus.get("stdlib/json")
    assert "JSON" in json_doc.text and json_doc.license == "PSF-2.0"
    assert "loads(" in json_doc.text
    assert corpus.get("stdlib/collections.OrderedDict").title.endswith("collections.OrderedDict")

    def fail(_: Path) -> int:
        raise AssertionError("rebuilt although cached")

    monkeypatch.setattr(stdlib_module, "write_stdlib_corpus", fail)
    again = open_corpus("stdlib", CorpusOptions(max_words=100))
    assert [d.id for d in again.documents] == [d.id for d in corpus.documents]
    sample = again.sample(random.Random(3))
    assert len(sample.text.split()) <= 101
