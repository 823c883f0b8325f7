"""Documents that ground the Environment Designer: JSONL/Parquet files, Hugging Face
datasets, and a default corpus built from the installed Python's standard library docs."""

from spade.corpus.corpus import STDLIB, Corpus, CorpusOptions, open_corpus
from spade.corpus.document import (
    DEFAULT_MAX_WORDS,
    CorpusError,
    Document,
    truncate_words,
    word_count,
)
from spade.corpus.stdlib import ensure_stdlib_corpus, stdlib_cache_path, write_stdlib_corpus

__all__ = [
    "DEFAULT_MAX_WORDS",
    "STDLIB",
    "Corpus",
    "CorpusError",
    "CorpusOptions",
    "Document",
    "ensure_stdlib_corpus",
    "open_corpus",
    "stdlib_cache_path",
    "truncate_words",
    "word_count",
    "write_stdlib_corpus",
]
