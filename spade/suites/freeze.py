"""Freeze env sources into a new suite version: check, score, deduplicate, write atomically.

Each candidate passes, in order: it parses; it is not a duplicate of an earlier candidate
(same bytes, or same normalised source); `validate_source` finds it valid in the sandbox; it
declares a kind (its class `metadata`, a memory entry, or the caller's default) and, when it
declares a `split` (`train` or `heldout`), a known one; solution() solves every eval seed; the
random agent plays it without breaking it. Candidates that fail are reported with the reason;
the rest become the suite. A split is given for every env of a suite or for none.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

import spade
from spade.envs.checks import ValidationReport, validate_source
from spade.envs.remote import RemoteEnv
from spade.sandbox import SandboxConfig, describe_backend
from spade.suites.errors import SuiteError
from spade.suites.manifest import (
    ENVS_DIR,
    KINDS,
    MANIFEST_FILE,
    SPLITS,
    EnvEntry,
    Manifest,
    check_name,
    check_semver,
    major_version,
    manifest_errors,
)
from spade.suites.normalise import normalised_sha256, sha256_hex
from spade.suites.reference import PlayError, reference_scores
from spade.suites.seeds import DEFAULT_EVAL_SEEDS, eval_seeds
from spade.suites.sources import Candidate, collect_sources
from spade.suites.store import version_dir, write_version

UNSPECIFIED = "unspecified"
_TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


@dataclass(frozen=True)
class FreezeOptions:
    """How `freeze_suite` checks and describes the envs it freezes."""

    eval_seeds: int = DEFAULT_EVAL_SEEDS
    """Evaluation seeds recorded per env (derived from the suite name and env id)."""
    check_seeds: int = 3
    """Seeds `validate_source` plays (0, 1, ...), as `spade-suite check --seeds`."""
    default_kind: str | None = None
    """Kind for envs whose metadata declares none (else they are rejected)."""
    description: str = ""
    license: str = "Apache-2.0"
    strict: bool = False
    """Write nothing when any candidate is rejected or dropped as a duplicate."""
    created: str | None = None
    """ISO-8601 UTC creation time; now when None."""
    sandbox: SandboxConfig | None = None
    progress: bool = False
    """Show a progress bar on stderr (only when it is a terminal)."""


@dataclass(frozen=True)
class Rejection:
    origin: str
    reason: str


@dataclass(frozen=True)
class Duplicate:
    origin: str
    duplicate_of: str
    exact: bool
    """True: identical bytes; False: same code up to comments, docstrings and layout."""


@dataclass
class FreezeReport:
    path: Path
    manifest: Manifest
    rejected: list[Rejection] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)
    env_seconds: dict[str, float] = field(default_factory=dict)
    """Checking and scoring time per candidate origin."""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "ref": self.manifest.ref,
            "envs": [env.id for env in self.manifest.envs],
            "rejected": [asdict(r) for r in self.rejected],
            "duplicates": [asdict(d) for d in self.duplicates],
            "seconds": self.seconds,
        }


def freeze_suite(
    sources: Sequence[str | Path],
    name: str,
    version: str,
    root: str | Path | None = None,
    options: FreezeOptions | None = None,
) -> FreezeReport:
    """Check the env sources and write them as suite `name@version` under the root."""
    options = options or FreezeOptions()
    started = time.perf_counter()
    check_name(name)
    check_semver(version)
    if options.default_kind is not None and options.default_kind not in KINDS:
        raise SuiteError(f"default kind {options.default_kind!r} is not one of {', '.join(KINDS)}")
    if options.eval_seeds < 1 or options.check_seeds < 1:
        raise SuiteError("eval seeds and check seeds must each be at least 1")
    if options.created is not None and not _TIMESTAMP.match(options.created):
        raise SuiteError(f"created {options.created!r} is not a UTC time like 2025-01-31T12:00:00Z")
    target = version_dir(root, name, version)
    if target.exists():  # checked up front too, before minutes of checking
        raise SuiteError(f"{target}: already exists; a frozen version is never overwritten")
    builder = _SuiteBuilder(name, major_version(version), options)
    unique = builder.deduplicate(collect_sources(sources))
    # disable=None: a bar only when stderr is a terminal.
    bar = tqdm(
        unique,
        desc=f"freeze {name}@{version}",
        unit="env",
        disable=None if options.progress else True,
    )
    for candidate in bar:
        builder.admit(candidate)
    builder.raise_if_unusable()
    builder.raise_if_partly_split()
    manifest = Manifest(
        name=name,
        version=version,
        created=options.created or datetime.now(UTC).strftime(_TIMESTAMP_FORMAT),
        spade_version=spade.__version__,
        description=options.description,
        license=options.license,
        envs=[entry for entry, _ in builder.entries],
        sandbox=describe_backend(options.sandbox),
    )
    errors = manifest_errors(manifest.to_json())
    if errors:  # our own output must meet our format; never write one that does not
        raise SuiteError(f"internal error, manifest fails its schema: {errors[0]}")
    files = {MANIFEST_FILE: manifest.dumps().encode("utf-8")}
    files |= {entry.file: data for entry, data in builder.entries}
    write_version(target, files)
    return FreezeReport(
        target,
        manifest,
        builder.rejected,
        builder.duplicates,
        builder.env_seconds,
        round(time.perf_counter() - started, 3),
    )


class _SuiteBuilder:
    """The accepted entries so far, and the names they have taken."""

    def __init__(self, suite: str, major: int, options: FreezeOptions) -> None:
        self.suite = suite
        self.major = major
        self.options = options
        self.entries: list[tuple[EnvEntry, bytes]] = []
        self.rejected: list[Rejection] = []
        self.duplicates: list[Duplicate] = []
        self.env_seconds: dict[str, float] = {}

    def deduplicate(self, candidates: list[Candidate]) -> list[Candidate]:
        """Drop unparsable sources and repeats; the first of equal sources is kept."""
        exact: dict[str, str] = {}  # sha256 of the bytes → origin of the first
        normalised: dict[str, str] = {}  # sha256 of the normal form → origin of the first
        unique: list[Candidate] = []
        for candidate in candidates:
            raw = sha256_hex(candidate.source.encode("utf-8"))
            try:
                normal = normalised_sha256(candidate.source)
            except (SyntaxError, ValueError) as exc:
                self.rejected.append(Rejection(candidate.origin, f"does not parse: {exc}"))
                continue
            if raw in exact:
                self.duplicates.append(Duplicate(candidate.origin, exact[raw], exact=True))
            elif normal in normalised:
                self.duplicates.append(Duplicate(candidate.origin, normalised[normal], exact=False))
            else:
                exact[raw] = normalised[normal] = candidate.origin
                unique.append(candidate)
        return unique

    def raise_if_unusable(self) -> None:
        problems = [f"{r.origin}: {r.reason}" for r in self.rejected]
        if self.options.strict:
            problems += [f"{d.origin}: duplicate of {d.duplicate_of}" for d in self.duplicates]
            if problems:
                count = len(problems)
                raise SuiteError(f"strict: {count} sources not frozen; first: {problems[0]}")
        if not self.entries:
            first = f"; first: {problems[0]}" if problems else ""
            raise SuiteError(f"nothing to freeze: no valid env among the sources{first}")

    def raise_if_partly_split(self) -> None:
        """A split is given for every env or for none: one left out would silently train."""
        unsplit = [entry.id for entry, _ in self.entries if entry.split is None]
        if unsplit and len(unsplit) < len(self.entries):
            raise SuiteError(
                f"{len(unsplit)} of {len(self.entries)} envs declare no metadata 'split' (first: "
                f"{unsplit[0]}) while the others do; give every env one ({' | '.join(SPLITS)}) "
                "or none"
            )

    def admit(self, candidate: Candidate) -> None:
        started = time.perf_counter()
        try:
            self.entries.append((self._entry(candidate), candidate.source.encode("utf-8")))
        except _Rejected as exc:
            self.rejected.append(Rejection(candidate.origin, str(exc)))
        self.env_seconds[candidate.origin] = round(time.perf_counter() - started, 4)

    def _entry(self, candidate: Candidate) -> EnvEntry:
        options = self.options
        filename = candidate.filename
        report = validate_source(candidate.source, filename, options.check_seeds, options.sandbox)
        if not report.valid or report.class_name is None:
            raise _Rejected(f"invalid: {_failures(report)}")
        metadata = self._metadata(candidate, report)
        # Same class name in two envs: number the later ones, in input order.
        identity = _numbered(
            f"{self.suite}/{report.class_name}",
            f"-v{self.major}",
            {entry.id for entry, _ in self.entries},
        )
        seeds = eval_seeds(self.suite, identity, options.eval_seeds)
        try:
            with RemoteEnv(candidate.source, filename, options.sandbox) as env:
                scores = reference_scores(env, seeds)
        except PlayError as exc:
            raise _Rejected(str(exc)) from None
        if scores.solution_return != 1.0:
            raise _Rejected(
                f"solution() averages reward {scores.solution_return:.3f} on the eval seeds, "
                "not 1.0"
            )
        files = {entry.file for entry, _ in self.entries}
        source = candidate.source
        return EnvEntry(
            id=identity,
            class_name=report.class_name,
            file=_numbered(f"{ENVS_DIR}/{filename.removesuffix('.py')}", ".py", files),
            sha256=sha256_hex(source.encode("utf-8")),
            normalised_sha256=normalised_sha256(source),
            kind=metadata["kind"],
            skill=metadata["skill"],
            difficulty=metadata["difficulty"],
            hint=metadata["hint"],
            source_document=candidate.source_document,
            eval_seeds=seeds,
            max_turns=report.max_turns,
            tools=[t["function"]["name"] for t in report.tools] if report.tools else None,
            validation=_validation_record(report, options.check_seeds),
            reference_scores=scores,
            provenance=candidate.provenance,
            split=metadata.get("split"),
            difficulty_levels=report.difficulty_levels if report.difficulty_levels > 1 else None,
        )

    def _metadata(self, candidate: Candidate, report: ValidationReport) -> dict[str, Any]:
        # The env class's own metadata wins over the memory entry's copy of it.
        merged: dict[str, Any] = {**candidate.metadata, **report.metadata}
        kind = merged.get("kind", self.options.default_kind)
        if kind is None:
            raise _Rejected(
                "its class metadata declares no 'kind'; add one or pass a default "
                f"kind ({' | '.join(KINDS)})"
            )
        if kind not in KINDS:
            raise _Rejected(f"metadata kind {kind!r} is not one of {', '.join(KINDS)}")
        split = merged.get("split")
        if split is not None and split not in SPLITS:
            raise _Rejected(f"metadata split {split!r} is not one of {', '.join(SPLITS)}")
        return {
            "split": split,
            "kind": kind,
            "skill": str(merged.get("skill") or UNSPECIFIED),
            "difficulty": str(merged.get("difficulty") or UNSPECIFIED),
            "hint": str(merged.get("hint") or ""),
        }


class _Rejected(Exception):
    """A candidate is not admitted; the message is the reason reported."""


def _numbered(stem: str, tail: str, taken: set[str]) -> str:
    """`stem + tail`, or the first of `stem_2 + tail`, `stem_3 + tail`, ... not taken."""
    name, number = stem + tail, 2
    while name in taken:
        name, number = f"{stem}_{number}{tail}", number + 1
    return name


def _failures(report: ValidationReport) -> str:
    failed = [c for c in report.failed() if not c.detail.startswith("not run")] or report.failed()
    text = "; ".join(f"{c.name}: {c.detail}" for c in failed[:3])
    return text if len(text) <= 300 else text[:297] + "..."


def _validation_record(report: ValidationReport, seeds: int) -> dict[str, Any]:
    data = report.to_json()
    keys = ("valid", "class_name", "checks", "reference_return", "seconds")
    return {key: data[key] for key in keys} | {"seeds": seeds}
