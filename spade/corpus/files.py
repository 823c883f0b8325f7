"""Corpus files: JSON Lines (optionally gzipped) and Parquet, one document per line/row.

Every line or row is `{"id", "text"}` plus optional `title`, `source`, `license`. Errors name
the file and the line (JSONL, 1-based) or row (Parquet, 0-based).
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path

import orjson

from spade.corpus.document import CorpusError
from spade.corpus.records import Located, document_from_record

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz")
PARQUET_SUFFIXES = (".parquet",)
_PARQUET_COLUMNS = ("id", "title", "text", "source", "license")


def read_jsonl(path: Path) -> Iterator[Located]:
    """The documents of a `.jsonl` or `.jsonl.gz` file, in file order; blank lines skipped."""
    with _open_binary(path) as stream:
        line_number = 0
        try:
            for line_number, line in enumerate(stream, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{line_number}"
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    raise CorpusError(f"{where}: not valid JSON ({exc.msg})") from None
                yield where, document_from_record(record, where, f"{path}:{line_number}")
        except (OSError, EOFError, zlib.error) as exc:
            # A corrupt or cut-off gzip stream fails mid-iteration, not at open.
            raise CorpusError(f"{path}: cannot read after line {line_number} ({exc})") from None


def read_parquet(path: Path) -> Iterator[Located]:
    """The documents of a Parquet file with string columns `id`, `text` (+ optional ones)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise CorpusError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow)") from None
    try:
        parquet = pq.ParquetFile(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise CorpusError(f"{path}: not a readable Parquet file ({exc})") from None
    columns = [name for name in _PARQUET_COLUMNS if name in parquet.schema_arrow.names]
    missing = {"id", "text"} - set(columns)
    if missing:
        have = ", ".join(parquet.schema_arrow.names)
        raise CorpusError(f"{path}: missing column(s) {', '.join(sorted(missing))} (has: {have})")
    row = 0
    for batch in parquet.iter_batches(columns=columns, batch_size=1024):
        for record in batch.to_pylist():
            where = f"{path}: row {row}"
            yield where, document_from_record(record, where, f"{path}#row{row}")
            row += 1


def _open_binary(path: Path) -> io.BufferedIOBase:
    try:
        if path.name.endswith(".gz"):
            return gzip.open(path, "rb")
        return path.open("rb")
    except OSError as exc:
        raise CorpusError(f"{path}: cannot open ({exc.strerror or exc})") from None
