"""A grounding document for the Environment Designer, and how its text is cut to a budget."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

DEFAULT_MAX_WORDS = 1500
"""The designer sees at most this many words of a document ("a few thousand words" in the
paper; 1,500 keeps a prompt with two reference envs under ~4k tokens)."""
TRUNCATION_MARKER = "[truncated]"
"""Appended on its own line when text is cut (the shared corpus marks its own cuts this way)."""

_WORD = re.compile(r"\S+")


class CorpusError(Exception):
    """A corpus could not be opened or read; the message names the file and line."""


@dataclass(frozen=True)
class Document:
    id: str
    """Unique within its corpus; recorded as an env's source document id."""
    title: str
    text: str
    source: str
    """Where the text came from (a URL, `github:OWNER/REPO@COMMIT:PATH`, a file and line)."""
    license: str

    def truncated(self, max_words: int | None) -> Document:
        """This document with its text cut to `max_words` words (None: unchanged)."""
        if max_words is None:
            return self
        text = truncate_words(self.text, max_words)
        return self if text is self.text else replace(self, text=text)


def word_count(text: str) -> int:
    return len(text.split())


def truncate_words(text: str, max_words: int, marker: str = TRUNCATION_MARKER) -> str:
    """`text` cut after its first `max_words` whitespace-separated words, layout kept.

    Whole words only: the cut falls right after a word, so line breaks and indentation before
    it are untouched. A cut text ends with `marker` on its own line (empty: no marker); text
    with at most `max_words` words is returned as it is.
    """
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, not {max_words}")
    end = None
    for count, match in enumerate(_WORD.finditer(text), start=1):
        if count == max_words:
            end = match.end()
        elif count > max_words:
            assert end is not None
            cut = text[:end]
            return f"{cut}\n{marker}" if marker else cut
    return text
