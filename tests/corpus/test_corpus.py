"""Corpus sources against the shared 4,070-document corpus and small files written here."""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

import pytest

from spade.corpus import (
    Corpus,
    CorpusError,
    CorpusOptions,
    Document,
    open_corpus,
    truncate_words,
    word_count,
)
from spade.corpus.hf import HfSpec, parse_hf_spec
from tests.data import DATA_DIR

SHARED_CORPUS = DATA_DIR / "corpus/corpus.jsonl.gz"
needs_shared = pytest.mark.skipif(not SHARED_CORPUS.is_file(), reason="shared corpus absent")
WORDS = " ".join(f"w{i}" for i in range(60))


@pytest.fixture(scope="module")
def shared() -> Corpus:
    return open_corpus(SHARED_CORPUS, CorpusOptions(min_words=0))


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def record(doc_id: str, text: str = WORDS, **extra: str) -> str:
    return json.dumps({"id": doc_id, "text": text, **extra})


@needs_shared
def test_shared_corpus_loads_every_document_with_its_fields(shared: Corpus) -> None:
    assert len(shared) == 4070
    assert len({doc.id for doc in shared.documents}) == 4070
    first = shared.documents[0]
    assert first.id == "openstax/osbooks-university-physics-bundle/m58268"
    assert first.title.startswith("University Physics Volume 1")
    assert first.source.startswith("github:openstax/") and first.license == "CC-BY-4.0"
    assert shared.get(first.id) is first


@needs_shared
def test_length_filter_skips_short_documents(shared: Corpus) -> None:
    filtered = open_corpus(SHARED_CORPUS, CorpusOptions(min_words=100))
    assert 0 < len(filtered) < len(shared)
    assert all(word_count(doc.text) >= 100 for doc in filtered.documents)
    expected = sum(word_count(doc.text) >= 100 for doc in shared.documents)
    assert len(filtered) == expected


@needs_shared
def test_seeded_sampling_is_reproducible_and_truncated(shared: Corpus) -> None:
    corpus = Corpus("shared", shared.documents, CorpusOptions(max_words=200))

    def draw(seed: int) -> list[str]:
        rng = random.Random(seed)
        return [corpus.sample(rng).id for _ in range(20)]

    assert draw(7) == draw(7)
    assert draw(7) != draw(8)
    samples = [corpus.sample(random.Random(seed)) for seed in range(50)]
    assert all(word_count(doc.text) <= 201 for doc in samples)  # 200 words + the marker
    long_one = next(doc for doc in samples if word_count(corpus.get(doc.id).text) > 200)
    assert long_one.text.endswith("\n[truncated]")
    assert corpus.get(long_one.id).text.startswith(long_one.text.removesuffix("\n[truncated]"))


def test_truncate_words_keeps_whole_words_and_layout() -> None:
    text = "alpha beta\n  gamma\tdelta\n\nepsilon"
    assert truncate_words(text, 5) is text  # fits: unchanged
    assert truncate_words(text, 3) == "alpha beta\n  gamma\n[truncated]"
    assert truncate_words(text, 3, marker="") == "alpha beta\n  gamma"
    assert truncate_words("  lead  ", 1) == "  lead  "
    with pytest.raises(ValueError, match="at least 1"):
        truncate_words(text, 0)
    doc = Document("d", "t", text, "s", "l")
    assert doc.truncated(None) is doc and doc.truncated(10) is doc
    assert doc.truncated(1).text == "alpha\n[truncated]"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "b", "text": ', "not valid JSON"),
        ('["not", "an", "object"]', "expected an object"),
        ('{"id": "b"}', "'text' must be a string"),
        ('{"id": "", "text": "x"}', "'id' must be a non-empty string"),
        ('{"id": "b", "text": "x", "title": 3}', "'title' must be a string"),
        (record("a"), "duplicate document id 'a' (first at"),
    ],
)
def test_malformed_line_names_the_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [record("a"), "", line])
    with pytest.raises(CorpusError) as caught:
        open_corpus(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:3: ") and message in text
    assert "\n" not in text


def test_optional_fields_default_and_integer_ids_are_accepted(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [json.dumps({"id": 7, "text": WORDS})])
    (doc,) = open_corpus(path).documents
    assert (doc.id, doc.title, doc.license) == ("7", "7", "unknown")
    assert doc.source == f"{path}:1"


def test_gzipped_jsonl_and_a_corrupt_gzip(tmp_path: Path) -> None:
    data = "".join(record(f"d{i}") + "\n" for i in range(50)).encode()
    good = tmp_path / "c.jsonl.gz"
    good.write_bytes(gzip.compress(data))
    assert len(open_corpus(good)) == 50
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(data)[:-30])
    with pytest.raises(CorpusError, match=f"^{cut}: cannot read after line"):
        open_corpus(cut)


def test_missing_file_unknown_spec_and_empty_corpus(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="nope.jsonl: cannot open"):
        open_corpus(tmp_path / "nope.jsonl")
    with pytest.raises(CorpusError, match="unknown corpus"):
        open_corpus(tmp_path / "corpus.txt")
    short = write_jsonl(tmp_path / "short.jsonl", [record("a", "too short")])
    with pytest.raises(CorpusError, match="no documents with at least 50 words"):
        open_corpus(short)


def test_parquet_corpus(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "c.parquet"
    table = pa.table({"id": ["a", "b"], "text": [WORDS, WORDS + " more"], "title": ["A", None]})
    pq.write_table(table, path)
    corpus = open_corpus(path)
    assert [d.id for d in corpus.documents] == ["a", "b"]
    assert [d.title for d in corpus.documents] == ["A", "b"]
    assert corpus.documents[1].source == f"{path}#row1"
    no_text = tmp_path / "no_text.parquet"
    pq.write_table(pa.table({"id": ["a"], "body": [WORDS]}), no_text)
    with pytest.raises(CorpusError, match=r"missing column\(s\) text \(has: id, body\)"):
        open_corpus(no_text)
    with pytest.raises(CorpusError, match="not a readable Parquet file"):
        open_corpus(write_jsonl(tmp_path / "fake.parquet", ["not parquet"]))


def test_optional_packages_missing_give_one_line_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry in sys.modules makes the import fail as if the package were absent.
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(CorpusError, match=r"needs pyarrow \(pip install pyarrow\)"):
        open_corpus(tmp_path / "c.parquet")
    with pytest.raises(CorpusError, match=r"^hf:some/name:train: needs the datasets package"):
        open_corpus("hf:some/name")


def test_hf_spec_parsing() -> None:
    assert parse_hf_spec("hf:org/name") == HfSpec("org/name", None, "train")
    assert parse_hf_spec("hf:org/name:validation") == HfSpec("org/name", None, "validation")
    assert parse_hf_spec("hf:wikimedia/wikipedia:20231101.en:train").config == "20231101.en"
    for bad in ("hf:", "hf:a::b", "hf:a:b:c:d"):
        with pytest.raises(CorpusError, match="expected hf:NAME"):
            parse_hf_spec(bad)


@pytest.mark.slow
def test_hf_corpus_streams_a_local_dataset_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hub needs network; a local folder goes through the same datasets streaming code.
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    folder = tmp_path / "ds"
    folder.mkdir()
    rows = [json.dumps({"text": f"{WORDS} {i}", "title": f"T{i}"}) for i in range(12)]
    write_jsonl(folder / "train.jsonl", rows)
    corpus = open_corpus(f"hf:{folder}", CorpusOptions(stream_documents=5))
    assert len(corpus) == 5
    first = corpus.documents[0]
    assert (first.id, first.title, first.source) == (
        f"{folder}/train/0",
        "T0",
        f"hf:{folder}:train#0",
    )
    with pytest.raises(CorpusError, match="cannot stream"):
        open_corpus(f"hf:{folder}:test")
