"""One corpus record (a JSON object, a Parquet row, a dataset example) → a `Document`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from spade.corpus.document import CorpusError, Document

UNKNOWN_LICENSE = "unknown"

Located = tuple[str, Document]
"""A document and where it was read (`FILE:LINE`, `FILE: row N`), for error messages."""


def document_from_record(record: object, where: str, default_source: str) -> Document:
    """The document a record describes: `id` and `text` required, the rest optional."""
    if not isinstance(record, Mapping):
        raise CorpusError(f"{where}: expected an object with 'id' and 'text'")
    doc_id = _identifier(record.get("id"), where)
    text = record.get("text")
    if not isinstance(text, str):
        raise CorpusError(f"{where}: 'text' must be a string (document {doc_id!r})")
    return Document(
        id=doc_id,
        title=_optional_str(record, "title", where) or doc_id,
        text=text,
        source=_optional_str(record, "source", where) or default_source,
        license=_optional_str(record, "license", where) or UNKNOWN_LICENSE,
    )


def unique_ids(located: Iterable[Located]) -> Iterator[Located]:
    """Pass documents through, failing on the first id seen twice (ids are provenance)."""
    first: dict[str, str] = {}
    for where, document in located:
        if document.id in first:
            raise CorpusError(
                f"{where}: duplicate document id {document.id!r} (first at {first[document.id]})"
            )
        first[document.id] = where
        yield where, document


def _identifier(value: Any, where: str) -> str:
    # Integer ids are common in datasets; they name a document just as well as strings.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise CorpusError(f"{where}: 'id' must be a non-empty string, not {value!r}")
    return value


def _optional_str(record: Mapping[str, Any], key: str, where: str) -> str | None:
    value = record.get(key)
    if value is None or isinstance(value, str):
        return value
    raise CorpusError(f"{where}: {key!r} must be a string, not {type(value).__name__}")
