"""What a warm-start env takes from its document: terms, names, numbers, short sentences.

A designer env is grounded when its items come from the document the prompt shows: the
words to deduce, the items to order, the quantities to search for. Only plain ASCII pieces
are kept, so they sit in a generated source as simple string literals.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_NOISE = re.compile(r"https?://\S+|<[^>]*>|`[^`]*`|\{\{[^}]*\}\}|\[[^\]]*\]\([^)]*\)")
_TERM = re.compile(r"\b[a-z]{4,9}\b")
# A capitalised word after a lower-case word or a comma: not a sentence's first word.
_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]{3,10}\b")
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?![\w]|[.,]\d)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_PLAIN_SENTENCE = re.compile(r"[A-Z][A-Za-z0-9 ,;'()-]+\.")
# Words too common to carry a document's content.
_STOP = frozenset(
    [
        "able",
        "about",
        "above",
        "across",
        "after",
        "again",
        "against",
        "along",
        "also",
        "although",
        "among",
        "another",
        "anyone",
        "around",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "beyond",
        "both",
        "cannot",
        "could",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "either",
        "else",
        "enough",
        "even",
        "ever",
        "every",
        "first",
        "from",
        "further",
        "given",
        "have",
        "having",
        "here",
        "however",
        "into",
        "itself",
        "just",
        "last",
        "later",
        "least",
        "less",
        "like",
        "made",
        "make",
        "makes",
        "many",
        "more",
        "most",
        "much",
        "must",
        "need",
        "never",
        "next",
        "none",
        "often",
        "once",
        "only",
        "other",
        "others",
        "over",
        "part",
        "perhaps",
        "rather",
        "same",
        "several",
        "shall",
        "should",
        "since",
        "some",
        "something",
        "such",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "therefore",
        "these",
        "they",
        "thing",
        "things",
        "this",
        "those",
        "though",
        "through",
        "thus",
        "together",
        "toward",
        "under",
        "until",
        "upon",
        "used",
        "uses",
        "using",
        "very",
        "want",
        "well",
        "were",
        "what",
        "when",
        "where",
        "whether",
        "which",
        "while",
        "whom",
        "whose",
        "will",
        "with",
        "within",
        "without",
        "would",
        "year",
        "years",
        "your",
        "first",
        "second",
        "third",
        "four",
        "five",
        "three",
        "true",
        "false",
        "none",
        "self",
        "note",
        "example",
        "following",
        "section",
        "chapter",
        "figure",
        "table",
        "value",
        "values",
        "objectives",
        "learning",
        "describe",
        "explain",
        "define",
        "will",
        "able",
        "https",
        "http",
        "html",
    ]
)


@dataclass(frozen=True)
class Content:
    """Pieces of one document a generated env can use as its items."""

    document_id: str
    topic: str
    """A short label from the title (letters and spaces only), for messages."""
    terms: tuple[str, ...]
    """Lower-case content words of 4-9 letters, most frequent first."""
    names: tuple[str, ...]
    """Capitalised words that never occur in lower case (places, people, projects)."""
    numbers: tuple[int, ...]
    """Integers from 2 to 1,000,000 in order of appearance, each once."""
    sentences: tuple[str, ...]
    """Plain sentences of 6-18 words."""

    def items(self, count: int, max_len: int = 8) -> tuple[str, ...]:
        """Up to `count` distinct item words of at most `max_len` letters (short words keep a
        source within the designer's token budget): names first, then terms."""
        pool = [name.lower() for name in self.names] + list(self.terms)
        return tuple(dict.fromkeys(w for w in pool if len(w) <= max_len))[:count]

    def label(self) -> str:
        """A CamelCase word for class names."""
        word = self.names[0] if self.names else self.terms[0] if self.terms else "Topic"
        return word[:1].upper() + word[1:].lower()


def extract(document_id: str, title: str, text: str) -> Content:
    """The usable pieces of a document's (already truncated) text."""
    clean = _NOISE.sub(" ", text)
    lower = Counter(_TERM.findall(clean))
    terms = [w for w, _ in sorted(lower.items(), key=lambda kv: -kv[1]) if w not in _STOP]
    seen_lower = {w.lower() for w in re.findall(r"\b[a-z]+\b", clean)}
    capitals = Counter(_NAME.findall(clean))
    names = [
        w for w, _ in capitals.most_common() if w.lower() not in seen_lower | _STOP and w.isascii()
    ]
    numbers: list[int] = []
    for raw in _NUMBER.findall(clean):
        value = int(raw.replace(",", ""))
        if 2 <= value <= 1_000_000 and value not in numbers:
            numbers.append(value)
    sentences = []
    for piece in _SENTENCE_END.split(" ".join(clean.split())):
        words = piece.split()
        if 6 <= len(words) <= 18 and _PLAIN_SENTENCE.fullmatch(piece):
            sentences.append(piece)
    return Content(
        document_id,
        _topic(title) or (names[0] if names else ""),
        tuple(terms[:16]),
        tuple(names[:10]),
        tuple(numbers[:12]),
        tuple(sentences[:10]),
    )


def _topic(title: str) -> str:
    """`U.S. History: The Westward Spirit` -> `The Westward Spirit`; `df (freebsd command)`
    -> `df`."""
    title = re.sub(r"\([^)]*\)", " ", title.rsplit(":", 1)[-1])
    words = [w for w in re.findall(r"[A-Za-z]+", title) if len(w) > 1 or w in "aAI"]
    return " ".join(words[:3])[:32]
