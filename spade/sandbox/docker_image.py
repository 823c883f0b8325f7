"""Build the docker backend's base image locally, with no registry.

The image is the host's own interpreter (real file, symlinks resolved), its standard library
without tests, site-packages or build files, the shared libraries `ldd` names for it and for
its extension modules (plus the dynamic loader), the worker script, /tmp, /scratch and a
`nobody` user. It is assembled as a tar and `docker import`ed, so no Docker Hub and no
Dockerfile build are involved. The tag carries a label with a hash of the recipe (the file
list with sizes and mtimes, the worker script, the recipe version): an unchanged host
reuses the image, an upgraded Python or a new worker script rebuilds it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from spade.sandbox.errors import SandboxError
from spade.sandbox.transport import WORKER_SCRIPT

DEFAULT_PYTHON = "/usr/bin/python3"
IMAGE_PYTHON = "/usr/bin/python3"
IMAGE_WORKER = "/spade/worker.py"
SCRATCH = "/scratch"
RECIPE_LABEL = "org.spade.sandbox.recipe"
# Bump when the way the tree is assembled changes, so old images are rebuilt.
RECIPE_VERSION = 1
NOBODY = 65534

# Directories of the standard library an env never needs: test suites, third-party
# packages, GUI toolkits (no display), bundled pip wheels and the static libpython of the
# build config (25 MB on Debian). Bytecode caches are kept on purpose: the root is
# read-only, so without them every worker start recompiles json/traceback/re from source.
_SKIP_DIRS = {
    "site-packages",
    "dist-packages",
    "test",
    "tests",
    "idle_test",
    "idlelib",
    "tkinter",
    "turtledemo",
    "ensurepip",
}
_SKIP_EXTENSIONS = ("_test", "_xxtestfuzz", "xxlimited", "_ctypes_test")
_PASSWD = (
    "root:x:0:0:root:/root:/usr/sbin/nologin\n"
    f"nobody:x:{NOBODY}:{NOBODY}:nobody:/nonexistent:/usr/sbin/nologin\n"
)
_GROUP = f"root:x:0:\nnogroup:x:{NOBODY}:\n"


@dataclass(frozen=True)
class Entry:
    """One member of the root filesystem: a host file, a symlink, a directory or text."""

    kind: str  # "file" | "link" | "dir" | "text"
    source: str = ""  # host path (file), link target (link) or content (text)
    mode: int = 0o755


@dataclass(frozen=True)
class Recipe:
    """Everything that goes into the image, and a digest of it."""

    version: str
    entries: dict[str, Entry]
    digest: str

    def size(self) -> int:
        return sum(os.path.getsize(e.source) for e in self.entries.values() if e.kind == "file")


def _probe(python: str) -> dict[str, Any]:
    script = (
        "import json, sys\n"
        "dyn = [p for p in sys.path if p.endswith('lib-dynload')]\n"
        "print(json.dumps({'version': '%d.%d' % sys.version_info[:2], 'prefix': sys.prefix,"
        " 'stdlib': sys._stdlib_dir, 'dynload': dyn[0] if dyn else None}))\n"
    )
    try:
        out = subprocess.run(
            [python, "-I", "-S", "-c", script], capture_output=True, text=True, timeout=30
        )
    except OSError as exc:
        raise SandboxError(f"cannot run {python} to build the sandbox image: {exc}") from None
    if out.returncode != 0:
        raise SandboxError(f"{python} failed while probing its layout: {out.stderr.strip()}")
    info: dict[str, Any] = json.loads(out.stdout)
    return info


def _ldd(paths: list[str]) -> list[str]:
    """Absolute paths of the shared libraries (and loader) the given ELF files need."""
    try:
        out = subprocess.run(["ldd", *paths], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise SandboxError(f"ldd is needed to build the sandbox image: {exc}") from None
    found: set[str] = set()
    for line in out.stdout.splitlines():
        line = line.strip()
        if "=> not found" in line:
            continue  # an optional extension module's dependency; that module will not import
        if "=>" in line:
            line = line.split("=>", 1)[1].strip()
        candidate = line.split(" (", 1)[0].strip()
        if candidate.startswith("/") and os.path.exists(candidate):
            found.add(candidate)
    return sorted(found)


def _add_host_path(path: str, entries: dict[str, Entry], depth: int = 0) -> None:
    """Add `path` as the host resolves it: every symlink on the way (directory or file) is
    recreated with its own target, so the loader and libraries sit where ELF headers and
    the default search path expect them (e.g. /lib64 -> usr/lib64 on merged-/usr hosts)."""
    if depth > 40:
        raise SandboxError(f"too many symlinks resolving {path}")
    parts = Path(path).parts[1:]
    current = "/"
    for index, part in enumerate(parts):
        candidate = os.path.join(current, part)
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            entries[candidate] = Entry("link", target)
            resolved = os.path.normpath(os.path.join(current, target))
            _add_host_path(os.path.join(resolved, *parts[index + 1 :]), entries, depth + 1)
            return
        current = candidate
    mode = os.stat(current).st_mode & 0o755
    entries[current] = Entry("file", current, mode)


def _skip_extension(name: str) -> bool:
    return name.startswith(_SKIP_EXTENSIONS)


def _walk_stdlib(stdlib: str, image_dir: str, entries: dict[str, Entry]) -> list[str]:
    """Copy the standard library tree; returns the extension modules found (for ldd)."""
    extensions: list[str] = []
    for root, dirs, files in os.walk(stdlib):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("config-"))
        relative = os.path.relpath(root, stdlib)
        target_dir = os.path.normpath(os.path.join(image_dir, relative))
        for name in sorted(files):
            host = os.path.join(root, name)
            if name.endswith(".so") and _skip_extension(name):
                continue
            if root.endswith("__pycache__") and ".opt-" in name:
                continue  # -O/-OO bytecode is never used by `python3 -I -S`
            if os.path.islink(host):
                host = os.path.realpath(host)
            if not os.path.isfile(host):
                continue
            entries[os.path.join(target_dir, name)] = Entry(
                "file", host, os.stat(host).st_mode & 0o755
            )
            if name.endswith(".so"):
                extensions.append(host)
    return extensions


def recipe(python: str = DEFAULT_PYTHON) -> Recipe:
    """What the image holds for this host interpreter; cached per process and interpreter."""
    return _recipe(os.path.realpath(python), python)


@functools.cache
def _recipe(binary: str, python: str) -> Recipe:
    if not os.path.isfile(binary):
        raise SandboxError(f"no interpreter at {python} to build the sandbox image from")
    info = _probe(binary)
    version, prefix = info["version"], os.path.realpath(info["prefix"])
    if tuple(int(part) for part in version.split(".")) < (3, 10):
        raise SandboxError(f"{python} is Python {version}; the sandbox worker needs 3.10+")

    def in_image(host: str) -> str:
        # A non-/usr prefix (pyenv, a source build) is moved to /usr in the image so the
        # interpreter finds its library relative to /usr/bin/python3 as usual.
        host = os.path.realpath(host)
        if prefix != "/usr" and (host == prefix or host.startswith(prefix + "/")):
            return "/usr" + host[len(prefix) :]
        return host

    entries: dict[str, Entry] = {}
    stdlib_image = in_image(info["stdlib"])
    extensions = _walk_stdlib(os.path.realpath(info["stdlib"]), stdlib_image, entries)
    if info["dynload"] and not os.path.realpath(info["dynload"]).startswith(
        os.path.realpath(info["stdlib"]) + "/"
    ):
        extensions += _walk_stdlib(
            os.path.realpath(info["dynload"]), in_image(info["dynload"]), entries
        )
    entries[f"/usr/bin/python{version}"] = Entry("file", binary, 0o755)
    entries[IMAGE_PYTHON] = Entry("link", f"python{version}")
    for library in _ldd([binary, *extensions]):
        mapped = in_image(library)
        if mapped != os.path.realpath(library):
            entries[mapped] = Entry("file", os.path.realpath(library), 0o755)
        else:
            _add_host_path(library, entries)
    entries[IMAGE_WORKER] = Entry("file", str(WORKER_SCRIPT), 0o644)
    entries["/etc/passwd"] = Entry("text", _PASSWD, 0o644)
    entries["/etc/group"] = Entry("text", _GROUP, 0o644)
    for directory in ("/tmp", SCRATCH):
        entries[directory] = Entry("dir", "", 0o1777)
    for directory in ("/proc", "/sys", "/dev"):
        entries[directory] = Entry("dir", "", 0o755)
    return Recipe(version, entries, _digest(entries))


def _digest(entries: dict[str, Entry]) -> str:
    """Hash of the recipe: paths, kinds, modes, and each host file's size and mtime (reading
    60 MB to hash contents on every start would cost more than it protects against)."""
    digest = hashlib.sha256(f"spade-sandbox-image/{RECIPE_VERSION}\n".encode())
    for path in sorted(entries):
        if "/__pycache__/" in path:
            # Bytecode follows from the sources hashed here; a cache the host compiled since
            # (any first import of a stdlib module) must not force a rebuild mid-run.
            continue
        entry = entries[path]
        stamp = ""
        if entry.kind == "file":
            stat = os.stat(entry.source)
            stamp = f"{stat.st_size}:{stat.st_mtime_ns}"
        digest.update(f"{path}\0{entry.kind}\0{entry.source}\0{entry.mode:o}\0{stamp}\n".encode())
    digest.update(WORKER_SCRIPT.read_bytes())  # content: edits within one second still count
    return digest.hexdigest()[:32]


def _parents(path: str) -> list[str]:
    parents = []
    parent = os.path.dirname(path)
    while parent not in ("/", ""):
        parents.append(parent)
        parent = os.path.dirname(parent)
    return parents[::-1]


def write_rootfs(spec: Recipe, out: BinaryIO) -> None:
    """Write the root filesystem as an uncompressed tar (root-owned, sorted, so the same
    host yields the same layer). File mtimes are kept: bytecode caches check them."""
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        written: set[str] = set()

        def add(path: str, entry: Entry) -> None:
            info = tarfile.TarInfo(path.lstrip("/"))
            info.uid = info.gid = 0
            info.mode = entry.mode
            if entry.kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif entry.kind == "link":
                info.type = tarfile.SYMTYPE
                info.linkname = entry.source
                info.mode = 0o777
                tar.addfile(info)
            elif entry.kind == "text":
                data = entry.source.encode()
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                stat = os.stat(entry.source)
                info.size = stat.st_size
                info.mtime = int(stat.st_mtime)
                with open(entry.source, "rb") as handle:
                    tar.addfile(info, handle)
            written.add(path)

        for path in sorted(spec.entries):
            for parent in _parents(path):
                if parent not in written and parent not in spec.entries:
                    add(parent, Entry("dir"))
            add(path, spec.entries[path])


def image_recipe_label(client: Any, tag: str) -> str | None:
    """The recipe label of the image `tag`, '' when it has none, None when it is absent."""
    import docker.errors

    try:
        attrs = client.api.inspect_image(tag)
    except docker.errors.ImageNotFound:
        return None
    labels = (attrs.get("Config") or {}).get("Labels") or {}
    return str(labels.get(RECIPE_LABEL, ""))


def ensure_image(client: Any, tag: str, python: str = DEFAULT_PYTHON) -> str:
    """Make sure `tag` exists on the engine `client` talks to; returns how it got there:
    'reused', 'built' or 'foreign' (an image without our label: the user's own, kept)."""
    import docker.errors

    spec = recipe(python)
    label = image_recipe_label(client, tag)
    if label == spec.digest:
        return "reused"
    if label == "":
        return "foreign"
    previous = client.api.inspect_image(tag)["Id"] if label is not None else None
    build_image(client, tag, spec)
    if previous is not None:
        # The outdated image is now untagged; drop it unless a container still uses it.
        with contextlib.suppress(docker.errors.APIError):
            client.api.remove_image(previous)
    return "built"


def build_image(client: Any, tag: str, spec: Recipe) -> None:
    repository, _, version = tag.rpartition(":")
    if not repository or "/" in version:
        repository, version = tag, "latest"
    changes = [
        f"LABEL {RECIPE_LABEL}={spec.digest}",
        f"USER {NOBODY}:{NOBODY}",
        f"WORKDIR {SCRATCH}",
        f'CMD ["{IMAGE_PYTHON}", "-I", "-S", "{IMAGE_WORKER}"]',
    ]
    # Spool to disk: the tar is tens of MB and requests streams a file body as it goes.
    with tempfile.TemporaryFile(prefix="spade-rootfs-") as handle:
        write_rootfs(spec, handle)
        handle.seek(0)
        reply = client.api.import_image_from_data(
            handle, repository=repository, tag=version, changes=changes
        )
    for line in str(reply).splitlines():
        if '"error"' in line:
            message = json.loads(line).get("error", line)
            raise SandboxError(f"docker import of {tag} failed: {message}")
    if image_recipe_label(client, tag) != spec.digest:
        raise SandboxError(f"docker import of {tag} did not produce the expected image")
