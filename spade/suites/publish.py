"""Publish a suite as a reproducible .tar.gz plus its sha256; optionally push it to the Hub.

The archive holds `NAME/VERSION/manifest.json` and the listed env files, so it unpacks into
a suites root as is. Entries are sorted, owned by uid/gid 0 with empty user names, dated by
the manifest's `created` time, and gzip gets mtime 0 and no file name: the same suite gives
byte-identical archives on every call (with the same zlib).
"""

from __future__ import annotations

import calendar
import gzip
import io
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from spade.atomic import write_atomic
from spade.suites.errors import SuiteError
from spade.suites.manifest import MANIFEST_FILE, Manifest, read_manifest
from spade.suites.normalise import sha256_hex
from spade.suites.store import resolve_suite
from spade.suites.verify import verify_suite


@dataclass(frozen=True)
class PublishResult:
    archive: Path
    sha256: str
    checksum_file: Path
    """`ARCHIVE.sha256`, in `sha256sum` format."""
    hub_url: str | None = None


def publish_suite(
    ref: str | Path,
    out_dir: str | Path,
    root: str | Path | None = None,
    hf_repo: str | None = None,
) -> PublishResult:
    """Write `<out>/<name>-<version>.tar.gz` and its `.sha256`; push them to `hf_repo` if set."""
    path = resolve_suite(ref, root)
    # Hashes only (no sandbox): never publish a suite whose files no longer match.
    report = verify_suite(path, recheck=False)
    if not report.ok:
        first = report.problems[0]
        raise SuiteError(
            f"{path / first.file}: {first.message}; not publishing ({len(report.problems)} "
            "problems, see spade-suite verify)"
        )
    manifest = read_manifest(path)
    data = archive_bytes(path, manifest)
    digest = sha256_hex(data)
    out = Path(out_dir)
    archive = out / f"{manifest.name}-{manifest.version}.tar.gz"
    checksum = archive.with_name(archive.name + ".sha256")
    _write_once(archive, data)
    _write_once(checksum, f"{digest}  {archive.name}\n".encode())
    url = push_to_hub(hf_repo, manifest, [archive, checksum]) if hf_repo else None
    return PublishResult(archive, digest, checksum, url)


def archive_bytes(path: Path, manifest: Manifest) -> bytes:
    """The suite's reproducible .tar.gz, in memory (suites are small)."""
    prefix = f"{manifest.name}/{manifest.version}"
    mtime = calendar.timegm(time.strptime(manifest.created, "%Y-%m-%dT%H:%M:%SZ"))
    files = {MANIFEST_FILE, *(env.file for env in manifest.envs)}
    folders = {str(Path(file).parent) for file in files} - {"."}
    entries: list[tuple[str, bytes | None]] = [(manifest.name, None), (prefix, None)]
    entries += [(f"{prefix}/{folder}", None) for folder in folders]
    entries += [(f"{prefix}/{file}", (path / file).read_bytes()) for file in files]
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name, content in sorted(entries, key=lambda item: item[0]):
            info = tarfile.TarInfo(name)
            info.mtime = mtime
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if content is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(content), 0o644
                tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def _write_once(path: Path, data: bytes) -> None:
    """Write `path` atomically; an existing file must already hold exactly `data`."""
    if path.exists():
        if path.read_bytes() == data:
            return
        raise SuiteError(
            f"{path}: exists with different contents; a published archive is "
            "never replaced (remove it first if that is intended)"
        )
    write_atomic(path, data)


def push_to_hub(repo_id: str, manifest: Manifest, files: list[Path]) -> str:
    """Upload the archive and checksum to a Hugging Face dataset repo in one commit.

    Needs `huggingface_hub`, network access and a token (`HF_TOKEN` or `hf auth login`); it
    is not exercised by the offline tests.
    """
    try:
        from huggingface_hub import CommitOperationAdd, HfApi
    except ImportError:
        raise SuiteError(
            "pushing to the Hub needs huggingface_hub: pip install huggingface_hub"
        ) from None
    api = HfApi()
    operations = [
        CommitOperationAdd(path_in_repo=f"{manifest.name}/{file.name}", path_or_fileobj=str(file))
        for file in files
    ]
    try:
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        api.create_commit(
            repo_id, operations, commit_message=f"Publish suite {manifest.ref}", repo_type="dataset"
        )
    except Exception as exc:  # network, auth, permissions: all reported the same way
        raise SuiteError(f"pushing {manifest.ref} to dataset {repo_id} failed: {exc}") from None
    return f"https://huggingface.co/datasets/{repo_id}/tree/main/{manifest.name}"
