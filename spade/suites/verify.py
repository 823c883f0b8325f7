"""Verify a frozen suite: schema, file hashes, and (optionally) every env re-checked.

Every problem names the file it is about, relative to the suite folder. The re-check runs
`validate_source` on the seeds the freeze used and confirms solution() still reaches 1.0 on
every eval seed, all in the sandbox; `recheck=False` skips that part.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from spade.envs.checks import validate_source
from spade.envs.remote import RemoteEnv
from spade.sandbox import SandboxConfig
from spade.suites.manifest import (
    MANIFEST_FILE,
    EnvEntry,
    Manifest,
    ManifestUnreadable,
    manifest_errors,
    read_manifest_json,
)
from spade.suites.normalise import sha256_hex
from spade.suites.reference import PlayError, unsolved_seeds
from spade.suites.store import by_name, resolve_suite


@dataclass(frozen=True)
class Problem:
    file: str
    """Relative to the suite folder: `manifest.json` or `envs/NAME.py`."""
    message: str


@dataclass
class VerifyReport:
    path: Path
    ref: str | None
    problems: list[Problem] = field(default_factory=list)
    envs: int = 0
    rechecked: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return data | {"path": str(self.path), "ok": self.ok}


def verify_suite(
    ref: str | Path,
    root: str | Path | None = None,
    recheck: bool = True,
    config: SandboxConfig | None = None,
    progress: bool = False,
) -> VerifyReport:
    """Everything wrong with a suite; raises `SuiteError` only when `ref` names none."""
    started = time.perf_counter()
    path = resolve_suite(ref, root)
    report = VerifyReport(path, None)
    manifest = _manifest(path, ref, report)
    if manifest is not None:
        report.ref = manifest.ref
        report.envs = len(manifest.envs)
        intact = _check_files(path, manifest, report)
        if recheck:
            report.rechecked = True
            bar = tqdm(
                intact,
                desc=f"verify {manifest.ref}",
                unit="env",
                disable=None if progress else True,
            )
            for entry, source in bar:
                report.problems += _recheck(entry, source, config)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _manifest(path: Path, ref: str | Path, report: VerifyReport) -> Manifest | None:
    try:
        data = read_manifest_json(path)
    except ManifestUnreadable as exc:
        report.problems.append(Problem(MANIFEST_FILE, exc.reason))
        return None
    errors = manifest_errors(data)
    report.problems += [Problem(MANIFEST_FILE, error) for error in errors]
    if errors or not isinstance(data, dict):
        return None
    manifest = Manifest.from_json(data)
    named = by_name(ref)
    if named is not None and named != (manifest.name, manifest.version):
        report.problems.append(
            Problem(MANIFEST_FILE, f"declares {manifest.ref}, but lives at {named[0]}@{named[1]}")
        )
    return manifest


def _check_files(
    path: Path, manifest: Manifest, report: VerifyReport
) -> list[tuple[EnvEntry, str]]:
    """Hash every listed file; returns the intact ones with their source."""
    intact: list[tuple[EnvEntry, str]] = []
    for entry in manifest.envs:
        file = path / entry.file
        if not file.is_file():
            report.problems.append(Problem(entry.file, f"missing (env {entry.id})"))
            continue
        data = file.read_bytes()
        digest = sha256_hex(data)
        if digest != entry.sha256:
            report.problems.append(
                Problem(entry.file, f"sha256 mismatch: manifest {entry.sha256}, file {digest}")
            )
            continue
        intact.append((entry, data.decode("utf-8")))
    listed = {MANIFEST_FILE, *(entry.file for entry in manifest.envs)}
    for extra in sorted(p for p in path.rglob("*") if p.is_file()):
        if "__pycache__" in extra.relative_to(path).parts:
            continue  # bytecode Python writes beside env files (pip does when it installs them)
        relative = extra.relative_to(path).as_posix()
        if relative not in listed:
            report.problems.append(Problem(relative, "not listed in the manifest"))
    return intact


def _recheck(entry: EnvEntry, source: str, config: SandboxConfig | None) -> list[Problem]:
    filename = Path(entry.file).name
    result = validate_source(source, filename, seeds=entry.validation["seeds"], config=config)
    if not result.valid:
        failed = "; ".join(f"{c.name}: {c.detail}" for c in result.failed()[:2])
        return [Problem(entry.file, f"no longer passes check: {failed}")]
    if result.class_name != entry.class_name:
        return [
            Problem(entry.file, f"defines {result.class_name}, manifest says {entry.class_name}")
        ]
    try:
        with RemoteEnv(source, filename, config) as env:
            unsolved = unsolved_seeds(env, entry.eval_seeds)
    except PlayError as exc:
        return [Problem(entry.file, str(exc))]
    return [
        Problem(entry.file, f"solution() ends with reward {reward} on eval seed {seed}")
        for seed, reward in unsolved
    ]
