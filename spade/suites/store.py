"""Where suites live: `<root>/<name>/<version>/`, how references resolve, atomic writes.

The root is `--root`, else `$SPADE_SUITES_ROOT`, else `envs_snapshots` in the working
directory; `freeze` writes there, never into an installed package. Without `--root` or the
variable, references and `list` look there first and then in the suites spade ships
(`spade-seed`): the checkout's `envs_snapshots/` or, installed from a wheel, the package's
copy. A reference is `NAME@VERSION` (optionally prefixed `suite:`) or the path of a folder
holding `manifest.json`.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from spade.atomic import write_dir_atomic
from spade.resources import shipped_dir
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


# The suites spade ships (spade-seed), found from any working directory.
SHIPPED_ROOT = shipped_dir("envs_snapshots")


def suites_root(root: str | Path | None = None) -> Path:
    """Where suites are written: the given root, else the variable's, else the default."""
    return Path(root or os.environ.get(ROOT_ENV_VAR) or DEFAULT_ROOT)


def lookup_roots(root: str | Path | None = None) -> list[Path]:
    """The roots searched for a suite version, first match wins: only the asked-for one when
    `root` or the variable names one, else the default root and then the shipped suites."""
    base = suites_root(root)
    if root is not None or os.environ.get(ROOT_ENV_VAR):
        return [base]
    if base.resolve() == SHIPPED_ROOT.resolve():  # working in the checkout itself
        return [base]
    return [base, SHIPPED_ROOT]


def _all_versions(root: str | Path | None, name: str) -> list[str]:
    """The versions of suite `name` under any lookup root, in semantic-version order."""
    found = {v for base in lookup_roots(root) for v in suite_versions(base, name)}
    return sorted(found, key=semver_key)


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
        versions = _all_versions(root, text) if NAME_PATTERN.match(text) else []
        if versions:
            raise SuiteError(f"give a version: {text}@VERSION (versions: {', '.join(versions)})")
        if path.is_dir():
            raise SuiteError(f"{path}: no {MANIFEST_FILE} here (not a suite folder)")
        raise SuiteError(f"{text!r} is neither NAME@VERSION nor a suite folder")
    name, version = named
    check_name(name)
    roots = lookup_roots(root)
    for base in roots:
        if (base / name / version / MANIFEST_FILE).is_file():
            return base / name / version
    if not any((base / name).is_dir() for base in roots):
        names = ", ".join(sorted({n for r in roots for n, _ in _suite_dirs(r)})) or "none"
        where = " or ".join(map(str, roots))
        raise SuiteError(f"unknown suite {name!r} under {where} (known: {names})")
    have = ", ".join(_all_versions(root, name)) or "none"
    raise SuiteError(f"suite {name!r} has no version {version!r} (versions: {have})")


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
    """Every suite version under `lookup_roots(root)`, the one a reference resolves to where
    two roots hold the same version."""
    listings: dict[tuple[str, str], Listing] = {}
    for base in lookup_roots(root):
        for name, folder in _suite_dirs(base):
            for version in suite_versions(base, name):
                if (name, version) in listings:
                    continue
                path = folder / version
                try:
                    listing = Listing(name, version, path, read_manifest(path))
                except SuiteError as exc:
                    listing = Listing(name, version, path, None, str(exc))
                listings[name, version] = listing
    return [listings[key] for key in sorted(listings, key=lambda k: (k[0], semver_key(k[1])))]


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
    exists = f"{target}: already exists; a frozen version is never overwritten"
    try:
        _make_parents(target.parent, created)
        if target.exists():
            raise SuiteError(exists)
        try:
            write_dir_atomic(target, lambda staging: _fill(staging, files))
        except FileExistsError:  # someone else froze the same version meanwhile
            raise SuiteError(exists) from None
    except BaseException:
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only removes it while it is still empty
        raise


def _fill(folder: Path, files: dict[str, bytes]) -> None:
    for relative, data in sorted(files.items()):
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


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
