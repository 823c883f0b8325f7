"""The page's string table: every text shown in a detail view is stored once.

Evaluation records repeat long texts (few-shot prompts, system prompts, env sources across
iterations): a sample refers to a text by its index, so a few-shot prompt shared by 5,000
samples costs its length once, not 5,000 times.
"""

from __future__ import annotations


class StringTable:
    def __init__(self) -> None:
        self.strings: list[str] = []
        self._index: dict[str, int] = {}

    def add(self, text: str) -> int:
        """The index of `text`, adding it on first sight."""
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.strings)
            self.strings.append(text)
        return found
