"""Environment memory: the accepted envs of a run, and what the designer is shown from it.

Each accepted env is recorded with its code, skill, win rate and regret in a bounded FIFO
(oldest out first) persisted as `RUN_DIR/memory.json`: a JSON list of entries
`{"id", "source", "kind", "skill", "difficulty", "document_id", "win_rate", "regret", "step",
"hint", "created_step"}`, oldest first, which `spade-suite freeze RUN_DIR` reads.

The designer sees about two reference envs whose win rate lies in the band [0.15, 0.85]
(drawn with probability proportional to max(regret, 0) + ε: high regret preferred), each as a
code excerpt of at most 2,000 characters with its win rate and regret, and one negative line
naming an env outside the band as too easy or too hard. Until memory holds enough envs in the
band, references come from a frozen suite (cold start) and are shown as reference examples.
"""

from __future__ import annotations

import ast
import json
import random
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from tabulate import tabulate

from spade.atomic import write_atomic
from spade.envs.scaffold import design_part
from spade.suites import load_suite
from spade.suites.sources import MEMORY_FILE

DEFAULT_CAPACITY = 200
COLD_START_SUITE = "spade-seed@1.2.0"
EXCERPT_MARKER = "# ... (excerpt cut here)"

Band = Literal["in band", "too easy", "too hard"]


class MemoryFileError(ValueError):
    """`memory.json` is unreadable or malformed; the message names the file and entry."""


@dataclass(frozen=True)
class MemoryEntry:
    """One accepted env. `win_rate`/`regret` were measured at `step`; it joined at
    `created_step` (equal unless the loop re-measures an env later)."""

    id: str
    source: str
    kind: str
    skill: str
    difficulty: str
    document_id: str
    win_rate: float
    """Share of no-hint plays solved, in [0, 1]."""
    regret: float
    """Mean hinted return − mean unhinted return, in [-1, 1]."""
    step: int
    hint: str
    created_step: int

    def __post_init__(self) -> None:
        for name in ("id", "source", "kind", "skill", "difficulty", "document_id", "hint"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name!r} must be a string, not {getattr(self, name)!r}")
        if not self.id:
            raise ValueError("'id' must not be empty")
        _check_number("win_rate", self.win_rate, 0.0, 1.0)
        _check_number("regret", self.regret, -1.0, 1.0)
        for name in ("step", "created_step"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name!r} must be a non-negative integer, not {value!r}")

    def band(self, low: float = 0.15, high: float = 0.85) -> Band:
        if self.win_rate > high:
            return "too easy"
        return "too hard" if self.win_rate < low else "in band"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> MemoryEntry:
        """An entry from its JSON object; `created_step` defaults to `step`. ValueError if bad."""
        if not isinstance(data, dict):
            raise ValueError("expected a JSON object")
        names = [f for f in cls.__dataclass_fields__ if f != "created_step"]
        missing = [name for name in names if name not in data]
        if missing:
            raise ValueError(f"missing field(s) {', '.join(missing)}")
        values = {name: data[name] for name in names}
        return cls(
            **values, created_step=data["created_step"] if "created_step" in data else data["step"]
        )


def _check_number(name: str, value: object, low: float, high: float) -> None:
    # NaN fails the range test too.
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ValueError(f"{name!r} must be a number in [{low:g}, {high:g}], not {value!r}")


class EnvMemory:
    """A bounded FIFO of accepted envs, oldest first; ids are unique."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, entries: Iterable[MemoryEntry] = ()):
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self.capacity = capacity
        self._entries: deque[MemoryEntry] = deque()
        for entry in entries:
            self.add(entry)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[MemoryEntry]:
        return iter(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return any(entry.id == entry_id for entry in self._entries)

    @property
    def entries(self) -> tuple[MemoryEntry, ...]:
        return tuple(self._entries)

    def add(self, entry: MemoryEntry) -> MemoryEntry | None:
        """Record an accepted env; returns the oldest entry if it had to make room."""
        if entry.id in self:
            raise ValueError(f"memory already holds an env with id {entry.id!r}")
        self._entries.append(entry)
        return self._entries.popleft() if len(self._entries) > self.capacity else None

    def update(self, entry_id: str, *, win_rate: float, regret: float, step: int) -> MemoryEntry:
        """Replace an entry's measurements (it keeps its place in the FIFO)."""
        for index, entry in enumerate(self._entries):
            if entry.id == entry_id:
                self._entries[index] = replace(entry, win_rate=win_rate, regret=regret, step=step)
                return self._entries[index]
        raise KeyError(f"no env {entry_id!r} in memory")

    def sources(self) -> list[tuple[str, str]]:
        """(id, source) of every entry, for the near-duplicate guard."""
        return [(entry.id, entry.source) for entry in self._entries]

    def save(self, run_dir: str | Path) -> Path:
        """Write `RUN_DIR/memory.json` atomically (temp file, fsync, rename)."""
        path = Path(run_dir) / MEMORY_FILE
        data = [entry.to_json() for entry in self._entries]
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        write_atomic(path, text)  # a crash leaves the old file or the new, never half
        return path

    @classmethod
    def load(cls, run_dir: str | Path, capacity: int = DEFAULT_CAPACITY) -> EnvMemory:
        """The memory saved in `RUN_DIR/memory.json` (empty if there is none yet); when the
        file holds more than `capacity` entries, the newest are kept."""
        path = Path(run_dir) / MEMORY_FILE
        if not path.exists():
            return cls(capacity)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise MemoryFileError(f"{path}: cannot read ({exc})") from None
        except json.JSONDecodeError as exc:
            raise MemoryFileError(
                f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})"
            ) from None
        if not isinstance(data, list):
            raise MemoryFileError(f"{path}: expected a JSON list of entries")
        entries = []
        for index, item in enumerate(data):
            try:
                entries.append(MemoryEntry.from_json(item))
            except (TypeError, ValueError) as exc:
                raise MemoryFileError(f"{path}: entry {index}: {exc}") from None
        try:
            return cls(capacity, entries[-capacity:])
        except ValueError as exc:  # a repeated id
            raise MemoryFileError(f"{path}: {exc}") from None


def new_entry_id(step: int, serial: int) -> str:
    """A memory id that is also a valid suite file name: `s000042_03`."""
    return f"s{step:06d}_{serial:02d}"


# --- what the designer is shown ------------------------------------------------------------


@dataclass(frozen=True)
class MemorySampling:
    """How references and the negative line are drawn from memory."""

    references: int = 2
    """Reference envs per designer prompt."""
    band_low: float = 0.15
    """Envs solved less often than this (without the hint) are too hard to imitate."""
    band_high: float = 0.85
    """Envs solved more often than this are too easy to imitate."""
    regret_epsilon: float = 0.05
    """References are drawn with weight max(regret, 0) + this: high regret preferred, and
    envs with zero regret still possible."""
    excerpt_chars: int = 2000
    """A reference's code is cut at a line boundary to at most this many characters."""


@dataclass(frozen=True)
class ColdStartEnv:
    """A frozen suite's env offered as a reference before memory has envs in the band."""

    id: str
    source: str
    kind: str
    skill: str
    hint: str | None = None
    """The suite's hint, so a replayed cold-start env also measures regret."""
    eval_seeds: frozenset[int] = frozenset()
    """Its evaluation seeds in the suite: a replay never plays them."""
    max_turns: int | None = None
    """Its stated turn budget (the suite's manifest)."""
    levels: int = 1
    """Difficulty levels it takes at reset (the manifest's `difficulty_levels`; 1: no knob)."""


@dataclass(frozen=True)
class MemoryReference:
    """A reference env for the designer prompt (`spade.selfplay.designer.Reference` takes
    its `excerpt`, `win_rate` and `regret`)."""

    id: str
    kind: str
    skill: str
    excerpt: str
    win_rate: float | None
    """None for a cold-start reference example (never measured in this run)."""
    regret: float | None


@dataclass(frozen=True)
class NegativeExample:
    id: str
    name: str
    """What the env is: its class name, skill and first docstring line."""
    reason: Literal["too easy", "too hard"]
    win_rate: float

    def line(self) -> str:
        """The prompt's negative line: `Avoid environments like X: too easy (...)`."""
        return (
            f"Avoid environments like {self.name}: {self.reason} "
            f"(solved in {self.win_rate:.0%} of plays without the hint)."
        )


@dataclass(frozen=True)
class MemoryContext:
    """The memory part of one designer prompt."""

    references: tuple[MemoryReference, ...]
    negative: NegativeExample | None = None
    cold_start: int = 0
    """How many of the references came from the cold-start suite."""


def sample_context(
    memory: EnvMemory,
    rng: random.Random,
    cold_start: Sequence[ColdStartEnv] = (),
    kind: str | None = None,
    sampling: MemorySampling | None = None,
) -> MemoryContext:
    """References and a negative line for one designer prompt, drawn with `rng`.

    With `kind`, only envs of that kind are considered (a tool-use designer prompt gets
    tool-use references). Missing references are filled from `cold_start`, uniformly.
    """
    sampling = sampling or MemorySampling()
    entries = [entry for entry in memory if kind is None or entry.kind == kind]
    banded = [e for e in entries if e.band(sampling.band_low, sampling.band_high) == "in band"]
    weights = [max(entry.regret, 0.0) + sampling.regret_epsilon for entry in banded]
    chosen = _weighted_sample(banded, weights, sampling.references, rng)
    references = [
        MemoryReference(
            e.id, e.kind, e.skill, excerpt(e.source, sampling.excerpt_chars), e.win_rate, e.regret
        )
        for e in chosen
    ]
    pool = [env for env in cold_start if kind is None or env.kind == kind]
    fill = rng.sample(pool, min(len(pool), sampling.references - len(references)))
    references += [
        MemoryReference(
            env.id, env.kind, env.skill, excerpt(env.source, sampling.excerpt_chars), None, None
        )
        for env in fill
    ]
    outside = [e for e in entries if e.band(sampling.band_low, sampling.band_high) != "in band"]
    negative = None
    if outside:
        entry = outside[rng.randrange(len(outside))]
        reason = entry.band(sampling.band_low, sampling.band_high)
        assert reason != "in band"
        negative = NegativeExample(
            entry.id, describe(entry.source, entry.skill), reason, entry.win_rate
        )
    return MemoryContext(tuple(references), negative, cold_start=len(fill))


def _weighted_sample(
    items: Sequence[MemoryEntry], weights: Sequence[float], count: int, rng: random.Random
) -> list[MemoryEntry]:
    """`count` distinct items, each draw proportional to the remaining items' weights."""
    items, weights = list(items), list(weights)
    chosen: list[MemoryEntry] = []
    while items and len(chosen) < count:
        index = rng.choices(range(len(items)), weights=weights)[0]
        chosen.append(items.pop(index))
        weights.pop(index)
    return chosen


def cold_start_envs(
    suite: str = COLD_START_SUITE, root: str | Path | None = None
) -> list[ColdStartEnv]:
    """The `train` envs of a frozen suite (sha256-checked) as cold-start references: a
    held-out env is never shown to the designer nor replayed."""
    loaded = load_suite(suite, root)
    return [ColdStartEnv(env.id, env.source(), env.entry.kind, env.entry.skill, env.entry.hint,
                         frozenset(env.entry.eval_seeds), env.entry.max_turns,
                         env.entry.difficulty_levels or 1)
            for env in loaded.envs_in("train")]  # fmt: skip


def excerpt(source: str, max_chars: int = 2000) -> str:
    """`source` if it fits in `max_chars`, else its longest prefix of whole lines that fits
    with a marker line saying it was cut. A scaffolded env shows its design (`design_part`):
    the designer writes only that part."""
    source = design_part(source)
    if len(source) <= max_chars:
        return source
    budget = max_chars - len(EXCERPT_MARKER) - 1
    cut = source.rfind("\n", 0, budget + 1)
    head = source[:cut] if cut > 0 else source[:budget]  # one giant first line: hard cut
    return f"{head.rstrip()}\n{EXCERPT_MARKER}"[:max_chars]


def describe(source: str, skill: str) -> str:
    """`ClassNameEnv (skill: S; "first docstring line")`, from the source (a scaffolded env's
    design) as far as it parses."""
    try:
        tree = ast.parse(design_part(source))
    except (SyntaxError, ValueError):
        return f"an env with skill {skill!r}"
    names = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Env")]
    doc = (ast.get_docstring(tree) or "").strip().splitlines()
    summary = f'; "{doc[0]}"' if doc else ""
    return f"{names[0] if names else 'the env'} (skill: {skill}{summary})"


# --- for `spade-train memory show RUN_DIR` ---------------------------------------------------


def memory_table(memory: EnvMemory, sampling: MemorySampling | None = None) -> str:
    """A Markdown table of the entries, oldest first, with each one's place relative to the
    reference band."""
    sampling = sampling or MemorySampling()
    if not len(memory):
        return "memory is empty"
    headers = ["id", "kind", "skill", "difficulty", "win rate", "regret", "band", "step", "doc"]
    rows = [
        [
            entry.id,
            entry.kind,
            entry.skill,
            entry.difficulty,
            f"{entry.win_rate:.2f}",
            f"{entry.regret:+.2f}",
            entry.band(sampling.band_low, sampling.band_high),
            entry.step
            if entry.step == entry.created_step
            else f"{entry.created_step}→{entry.step}",
            entry.document_id,
        ]
        for entry in memory
    ]
    summary = f"{len(memory)}/{memory.capacity} envs"
    return (
        tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True) + f"\n\n{summary}"
    )
