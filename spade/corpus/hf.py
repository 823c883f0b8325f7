"""A Hugging Face dataset as a corpus, streamed with `datasets` (needs network for hub names).

`hf:NAME[:SPLIT]` or `hf:NAME:CONFIG:SPLIT`; NAME may also be a local dataset folder. Only the
first documents of the stream are kept (a stream has no random access): sampling is uniform
over that prefix, and reproducible as long as the dataset revision is the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from spade.corpus.document import CorpusError
from spade.corpus.records import Located, document_from_record

HF_PREFIX = "hf:"
DEFAULT_SPLIT = "train"


@dataclass(frozen=True)
class HfSpec:
    name: str
    config: str | None
    split: str

    @property
    def label(self) -> str:
        config = f":{self.config}" if self.config else ""
        return f"{HF_PREFIX}{self.name}{config}:{self.split}"


def parse_hf_spec(spec: str) -> HfSpec:
    """`hf:NAME`, `hf:NAME:SPLIT` or `hf:NAME:CONFIG:SPLIT` → its parts."""
    parts = spec.removeprefix(HF_PREFIX).split(":")
    if not parts[0] or len(parts) > 3 or not all(parts):
        raise CorpusError(f"{spec!r}: expected hf:NAME, hf:NAME:SPLIT or hf:NAME:CONFIG:SPLIT")
    if len(parts) == 3:
        return HfSpec(parts[0], parts[1], parts[2])
    return HfSpec(parts[0], None, parts[1] if len(parts) == 2 else DEFAULT_SPLIT)


def read_hf(spec: HfSpec, text_field: str = "text") -> Iterator[Located]:
    """The examples of a streamed dataset split as documents; the caller stops reading."""
    try:
        import datasets
    except ImportError:
        raise CorpusError(
            f"{spec.label}: needs the datasets package (pip install datasets)"
        ) from None
    try:
        stream = datasets.load_dataset(spec.name, spec.config, split=spec.split, streaming=True)
        for index, example in enumerate(stream):
            where = f"{spec.label} example {index}"
            yield (
                where,
                document_from_record(
                    _record(example, text_field, spec, index), where, f"{spec.label}#{index}"
                ),
            )
    except CorpusError:
        raise
    except Exception as exc:  # network, unknown dataset, bad split: datasets raises many types
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CorpusError(f"{spec.label}: cannot stream ({message})") from None


def _record(example: dict[str, Any], text_field: str, spec: HfSpec, index: int) -> dict[str, Any]:
    # Datasets rarely carry our exact fields: fall back to a positional id and take the text
    # from the named column; other fields are used only when they are strings.
    # Ids are prefixed with the dataset name so that an env's source document id says where
    # the text came from.
    own_id = example.get("id")
    usable = isinstance(own_id, str | int) and not isinstance(own_id, bool) and str(own_id)
    record: dict[str, Any] = {
        "id": f"{spec.name}/{own_id if usable else f'{spec.split}/{index}'}",
        "text": example.get(text_field),
    }
    for key in ("title", "source", "license"):
        if isinstance(example.get(key), str):
            record[key] = example[key]
    return record
