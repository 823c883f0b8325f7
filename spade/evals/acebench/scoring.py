"""ACEBench's two agent metrics.

- End state: every compared class's saved attributes equal the ground truth. Upstream checks
  dict attributes one way only (each expected key must match; extra keys in the model's
  state, e.g. a message it failed to delete, pass) and skips classes it cannot pair by name;
  here the comparison is exact equality for every class (see errata for the names).
- Process: the milestones (ACEBench call strings) matched, in order, against the agent's call
  messages, compared as stripped text; upstream's greedy scan is kept (once a milestone is not
  found, the later ones are not either). Best over alternative paths; 1.0 when the end state
  is right, as upstream.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_SHOWN_CHARS = 300


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT = _Absent()


def end_state_diff(
    actual: dict[str, dict[str, Any]], expected: dict[str, dict[str, Any]]
) -> list[str]:
    """What differs, one line per attribute, dict key or list item; empty when equal."""
    lines = []
    for name, want in expected.items():
        have = actual.get(name)
        if have is None:
            lines.append(f"{name}: class missing from the final state")
            continue
        for attr in sorted(set(want) | set(have)):
            lines.extend(
                _attr_diff(f"{name}.{attr}", want.get(attr, ABSENT), have.get(attr, ABSENT))
            )
    return lines


def _attr_diff(where: str, want: Any, have: Any) -> list[str]:
    """Dicts and lists are compared item by item, so a line names the message, order or
    reservation that differs; ABSENT marks an item only one side has."""
    if want == have:
        return []
    if isinstance(want, dict) and isinstance(have, dict):
        keys = sorted(set(want) | set(have), key=str)
        pairs = [(f"{where}[{k!r}]", want.get(k, ABSENT), have.get(k, ABSENT)) for k in keys]
    elif isinstance(want, list) and isinstance(have, list):
        size = max(len(want), len(have))
        padded = [(want + [ABSENT] * size)[:size], (have + [ABSENT] * size)[:size]]
        pairs = [(f"{where}[{i}]", w, h) for i, (w, h) in enumerate(zip(*padded, strict=True))]
    else:
        return [_line(where, want, have)]
    return [_line(at, w, h) for at, w, h in pairs if w != h]


def _line(where: str, want: Any, have: Any) -> str:
    return f"{where}: expected {_short(want)}, got {_short(have)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"


def process_accuracy(calls: Sequence[str], milestones: Sequence[Sequence[str]]) -> float:
    """The best fraction of a milestone path found in order in `calls` (agent messages)."""
    return max((_path_accuracy(calls, path) for path in milestones), default=1.0)


def _path_accuracy(calls: Sequence[str], path: Sequence[str]) -> float:
    if not path:
        return 1.0
    found, position = 0, 0
    for stone in path:
        while position < len(calls):
            position += 1
            if calls[position - 1].strip() == stone.strip():
                found += 1
                break
    return found / len(path)
