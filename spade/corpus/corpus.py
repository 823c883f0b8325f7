"""A corpus the designer samples documents from, and `open_corpus` for every kind of source.

A spec is a file path (`.jsonl`, `.jsonl.gz`, `.parquet`), `hf:NAME[:SPLIT]` (or
`hf:NAME:CONFIG:SPLIT`), or None / `stdlib` for the default corpus built from the installed
Python's documentation. Documents are held in memory in source order, so sampling with a
seeded `random.Random` is reproducible.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from spade.corpus.document import DEFAULT_MAX_WORDS, CorpusError, Document, word_count
from spade.corpus.files import JSONL_SUFFIXES, PARQUET_SUFFIXES, read_jsonl, read_parquet
from spade.corpus.hf import HF_PREFIX, parse_hf_spec, read_hf
from spade.corpus.records import Located, unique_ids
from spade.corpus.stdlib import ensure_stdlib_corpus

STDLIB = "stdlib"


@dataclass(frozen=True)
class CorpusOptions:
    min_words: int = 50
    """Skip documents shorter than this many words (stubs give the designer nothing to use)."""
    max_words: int | None = DEFAULT_MAX_WORDS
    """`sample` cuts a document's text to this many words (None: whole documents)."""
    stream_documents: int = 10_000
    """For `hf:` corpora: how many documents of the stream to keep and sample from."""
    text_field: str = "text"
    """For `hf:` corpora: the column holding the document text."""
    cache_dir: Path | None = None
    """Where the stdlib corpus is cached (default `<spade cache>/corpus`)."""


class Corpus:
    """Documents in a fixed order; `sample` draws one uniformly with the caller's RNG."""

    def __init__(self, name: str, documents: Sequence[Document], options: CorpusOptions) -> None:
        if not documents:
            raise CorpusError(f"{name}: no documents with at least {options.min_words} words")
        self.name = name
        self.documents = tuple(documents)
        self.options = options
        self._index = {doc.id: i for i, doc in enumerate(self.documents)}

    @classmethod
    def from_located(
        cls, name: str, located: Iterable[Located], options: CorpusOptions, limit: int | None = None
    ) -> Corpus:
        """Keep the documents long enough for `options.min_words`, at most `limit` of them."""
        long_enough = (
            doc for _, doc in unique_ids(located) if word_count(doc.text) >= options.min_words
        )
        return cls(name, list(itertools.islice(long_enough, limit)), options)

    def __len__(self) -> int:
        return len(self.documents)

    def __repr__(self) -> str:
        return f"Corpus({self.name!r}, {len(self)} documents)"

    def sample(self, rng: random.Random) -> Document:
        """One document, chosen uniformly by `rng`, its text cut to `options.max_words`."""
        document = self.documents[rng.randrange(len(self.documents))]
        return document.truncated(self.options.max_words)

    def get(self, doc_id: str) -> Document:
        """The whole document with this id."""
        try:
            return self.documents[self._index[doc_id]]
        except KeyError:
            raise CorpusError(f"{self.name}: no document {doc_id!r}") from None


def open_corpus(spec: str | Path | None = None, options: CorpusOptions | None = None) -> Corpus:
    """The corpus `spec` names: a file, `hf:NAME[:SPLIT]`, or None/`stdlib` (the default)."""
    options = options or CorpusOptions()
    if options.min_words < 0 or options.stream_documents < 1:
        raise CorpusError("min_words must be >= 0 and stream_documents >= 1")
    if options.max_words is not None and options.max_words < 1:
        raise CorpusError(f"max_words must be at least 1 (or None), not {options.max_words}")
    text = str(spec) if spec is not None else STDLIB
    if text == STDLIB:
        path = ensure_stdlib_corpus(options.cache_dir)
        return Corpus.from_located(STDLIB, read_jsonl(path), options)
    if text.startswith(HF_PREFIX):
        hf = parse_hf_spec(text)
        located = read_hf(hf, options.text_field)
        return Corpus.from_located(hf.label, located, options, limit=options.stream_documents)
    path = Path(text)
    if path.name.endswith(JSONL_SUFFIXES):
        return Corpus.from_located(str(path), read_jsonl(path), options)
    if path.name.endswith(PARQUET_SUFFIXES):
        return Corpus.from_located(str(path), read_parquet(path), options)
    raise CorpusError(
        f"{text}: unknown corpus; give a .jsonl, .jsonl.gz or .parquet file, hf:NAME[:SPLIT], "
        f"or {STDLIB}"
    )
