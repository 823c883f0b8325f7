"""Where suites live: `<root>/<name>/<version>/`, how references resolve, atomic writes.

The root is `--root`, else `$SPADE_SUITES_ROOT`, else `envs_snapshots` in the working
directory. A reference is `NAME@VERSION` (optionally prefixed `suite:`) or the path of a
folder holding `manifest.json`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from spade.suites.errors import SuiteError
from spade.suites.manifest import (
    MANIFEST_FILE,
    NAME_PATTERN,
    Manifest,
    check_name,
    read_manifest,
    semver_key,
)

ROOT_ENV_VAR = "SPADE_SUITES_ROOT"
DEFAULT_ROOT = "envs_snapshots"
REF_PREFIX = "suite:"


# The suites this checkout ships (spade-seed), found from any working directory.
SHIPPED_ROOT = Path(__file__).resolve().parents[2] / DEFAULT_ROOT


def suites_root(root: str | Path | None = None) -> Path:
    return Path(root or os.environ.get(ROOT_ENV_VAR) or DEFAULT_ROOT)


def _lookup_root(root: str | Path | None, name: str) -> Path:
    """The root to find suite `name` under: the given/env/default root, else the shipped one
    when no root was asked for and the default lacks the suite."""
    base = suites_root(root)
    explicit = root is not None or os.environ.get(ROOT_ENV_VAR)
    if not explicit and not (base / name).is_dir() and (SHIPPED_ROOT / name).is_dir():
        return SHIPPED_ROOT
    return base


def version_dir(root: str | Path | None, name: str, version: str) -> Path:
    return suites_root(root) / name / version


def by_name(ref: str | Path) -> tuple[str, str] | None:
    """(name, version) when `ref` is a `NAME@VERSION` reference rather than a folder path."""
    text = str(ref).removeprefix(REF_PREFIX)
    if (Path(text) / MANIFEST_FILE).is_file() or "@" not in text:
        return None
    name, _, version = text.partition("@")
    return name, version


def resolve_suite(ref: str | Path, root: str | Path | None = None) -> Path:
    """The folder of the suite `ref` names; raises `SuiteError` when there is none."""
    text = str(ref).removeprefix(REF_PREFIX)
    named = by_name(ref)
    if named is None:
        path = Path(text)
        if (path / MANIFEST_FILE).is_file():
            return path
        versions = suite_versions(root, text) if NAME_PATTERN.match(text) else []
        if versions:
            raise SuiteError(f"give a version: {text}@VERSION (versions: {', '.join(versions)})")
        if path.is_dir():
            raise SuiteError(f"{path}: no {MANIFEST_FILE} here (not a suite folder)")
        raise SuiteError(f"{text!r} is neither NAME@VERSION nor a suite folder")
    name, version = named
    check_name(name)
    base = _lookup_root(root, name)
    if not (base / name).is_dir():
        names = ", ".join(sorted(n for n, _ in _suite_dirs(base))) or "none"
        raise SuiteError(f"unknown suite {name!r} under {base} (known: {names})")
    path = base / name / version
    if not (path / MANIFEST_FILE).is_file():
        have = ", ".join(suite_versions(base, name)) or "none"
        raise SuiteError(f"suite {name!r} has no version {version!r} (versions: {have})")
    return path


def suite_versions(root: str | Path | None, name: str) -> list[str]:
    """The versions of a suite under the root, in semantic-version order."""
    folder = suites_root(root) / name
    if not folder.is_dir():
        return []
    found = [p.name for p in folder.iterdir() if (p / MANIFEST_FILE).is_file()]
    return sorted(found, key=semver_key)


@dataclass(frozen=True)
class Listing:
    """One version folder under the root; `error` says why its manifest could not be read."""

    name: str
    version: str
    path: Path
    manifest: Manifest | None
    error: str | None = None


def list_suites(root: str | Path | None = None) -> list[Listing]:
    listings: list[Listing] = []
    for name, folder in sorted(_suite_dirs(suites_root(root))):
        for version in suite_versions(root, name):
            path = folder / version
            try:
                listings.append(Listing(name, version, path, read_manifest(path)))
            except SuiteError as exc:
                listings.append(Listing(name, version, path, None, str(exc)))
    return listings


def _suite_dirs(base: Path) -> list[tuple[str, Path]]:
    if not base.is_dir():
        return []
    # Dot-folders are freeze's temporary builds; never list them.
    return [(p.name, p) for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")]


def write_version(target: Path, files: dict[str, bytes]) -> None:
    """Create the folder `target` holding `files` (relative path → bytes), all or nothing.

    Everything is written into a temporary folder beside the target and renamed into place,
    so readers never see a half-written suite and a failure leaves nothing behind (not even
    the parent folders this call created).
    """
    created: list[Path] = []
    staging: Path | None = None
    try:
        _make_parents(target.parent, created)
        if target.exists():
            raise SuiteError(f"{target}: already exists; a frozen version is never overwritten")
        staging = Path(
            tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
        )
        for relative, data in sorted(files.items()):
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        staging.chmod(0o755)  # mkdtemp makes it private
        if target.exists():  # someone else froze the same version meanwhile
            raise SuiteError(f"{target}: already exists; a frozen version is never overwritten")
        os.rename(staging, target)
    except BaseException:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only removes it while it is still empty
        raise


def _make_parents(folder: Path, created: list[Path]) -> None:
    """Create `folder` and its missing parents, recording the ones this call made."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            continue
        except OSError as exc:
            raise SuiteError(f"{path}: cannot create ({exc.strerror or exc})") from None
        created.append(path)
