"""The default corpus: documentation of the installed Python standard library.

It exists on any machine with no download: one document per module (its docstring and its
public functions) and one per public class (its docstring and methods), for a fixed list of
modules. Text comes from docstrings and `inspect.signature`, never from module data values
(pydoc would print `os.environ`, i.e. the host's secrets). Object addresses in signatures
are replaced, so a build is byte-identical on the same Python. The result is cached as JSONL
under `<spade cache>/corpus/`, keyed by the Python version and the builder version.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

from spade.atomic import write_atomic
from spade.corpus.document import CorpusError, Document
from spade.paths import spade_cache_dir

BUILDER_VERSION = 2
"""Bump when the rendering changes, so stale caches are rebuilt rather than reused."""
STDLIB_LICENSE = "PSF-2.0"
MIN_DOC_CHARS = 200
"""Sections shorter than this (a class with a one-line docstring) are not documents."""

# Modules with substantial docstrings and no side effects on import, in sorted order. Left
# out: modules that act on import (this, antigravity), need a display or missing system
# libraries (tkinter, turtle, curses), describe the host (locale, platform, sysconfig) or
# are deprecated (asynchat, imp, cgi ...).
MODULES: tuple[str, ...] = (
    "abc", "argparse", "array", "ast", "asyncio", "base64", "bisect", "calendar", "cmath",
    "codecs", "collections", "collections.abc", "colorsys", "concurrent.futures",
    "configparser", "contextlib", "contextvars", "copy", "csv", "dataclasses", "datetime",
    "decimal", "difflib", "dis", "doctest", "email.message", "enum", "filecmp", "fnmatch",
    "fractions", "functools", "getopt", "gettext", "glob", "graphlib", "gzip", "hashlib",
    "heapq", "hmac", "html", "html.parser", "http", "http.client", "http.cookies",
    "imaplib", "inspect", "io", "ipaddress", "itertools", "json", "keyword", "linecache",
    "logging", "lzma", "math", "mimetypes", "numbers", "operator", "os.path", "pathlib",
    "pickle", "pprint", "queue", "quopri", "random", "re", "reprlib", "sched", "secrets",
    "selectors", "shelve", "shlex", "shutil", "smtplib", "socket", "sqlite3", "statistics",
    "string", "struct", "subprocess", "tarfile", "tempfile", "textwrap", "threading",
    "time", "timeit", "tokenize", "tomllib", "trace", "traceback", "types", "typing",
    "unicodedata", "unittest", "urllib.parse", "urllib.request", "uuid", "warnings",
    "wave", "weakref", "xml.dom.minidom", "xml.etree.ElementTree", "zipfile", "zlib",
    "zoneinfo",
)  # fmt: skip # a word list: one name a line would take 105 lines

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def stdlib_cache_path(cache_dir: Path | None = None) -> Path:
    """The cached corpus file for this Python: `<cache>/corpus/stdlib-py<version>-v<N>.jsonl`."""
    version = "{}.{}.{}-{}".format(*sys.version_info[:3], sys.implementation.cache_tag)
    base = cache_dir or spade_cache_dir() / "corpus"
    return base / f"stdlib-py{version}-v{BUILDER_VERSION}.jsonl"


def ensure_stdlib_corpus(cache_dir: Path | None = None) -> Path:
    """The cached stdlib corpus file, built now if it is missing."""
    path = stdlib_cache_path(cache_dir)
    if not path.is_file():
        write_stdlib_corpus(path)
    return path


def write_stdlib_corpus(path: Path) -> int:
    """Build the corpus into `path` (atomically) and return its number of documents.

    The build runs in a fresh interpreter: docstrings and signatures of an already running
    process can carry its state (patched hooks, configured logging), and the corpus must be
    the same bytes whoever builds it.
    """
    # The child gets our sys.path so it imports this same spade, installed or not.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONOPTIMIZE"} | {"PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(sys.path)],
            capture_output=True,
            env=env,
            timeout=600,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CorpusError(f"cannot build the stdlib corpus ({exc})") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"]
        raise CorpusError(f"cannot build the stdlib corpus: {lines[-1]}")
    _write_atomically(path, done.stdout)
    return done.stdout.count(b"\n")


_CHILD = (
    "import json, sys; sys.path[:0] = json.loads(sys.argv[1]); "
    "from spade.corpus.stdlib import build_stdlib_corpus; "
    "sys.stdout.buffer.write(build_stdlib_corpus())"
)


def build_stdlib_corpus() -> bytes:
    """The corpus as JSON Lines, built in this process (see `write_stdlib_corpus`)."""
    documents = list(stdlib_documents())
    if not documents:
        raise CorpusError("the standard library has no docstrings here (is Python run with -OO?)")
    return b"".join(orjson.dumps(_record(doc)) + b"\n" for doc in documents)


def _write_atomically(path: Path, data: bytes) -> None:
    try:
        write_atomic(path, data)  # a concurrent reader sees no file or the whole file
    except OSError as exc:
        raise CorpusError(f"{path}: cannot write the stdlib corpus ({exc})") from None


def stdlib_documents() -> Iterator[Document]:
    """The documents, in a fixed order: each module, then its classes by name."""
    major_minor = "{}.{}".format(*sys.version_info[:2])
    for name in MODULES:
        module = _import(name)
        if module is None:
            continue
        for suffix, text in _sections(module):
            if len(text) < MIN_DOC_CHARS:
                continue
            doc_id = f"stdlib/{name}{suffix}"
            yield Document(
                id=doc_id,
                title=f"Python {major_minor} standard library: {name}{suffix}",
                text=_ADDRESS.sub("", text),
                source=f"python-stdlib:{sys.version.split()[0]}:{name}{suffix}",
                license=STDLIB_LICENSE,
            )


def _import(name: str) -> ModuleType | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecation notices are not our user's concern
            return importlib.import_module(name)
    except ImportError:  # e.g. sqlite3 or lzma on a Python built without them
        return None


def _sections(module: ModuleType) -> Iterator[tuple[str, str]]:
    """(id suffix, text): the module with its functions, then each class."""
    functions, classes = [], []
    for attr, value in _public_members(module):
        if inspect.isclass(value):
            classes.append((attr, value))
        else:
            functions.append(_entry(attr, value))
    head = [f"# {module.__name__}", inspect.getdoc(module) or ""]
    yield "", "\n\n".join(part for part in [*head, *functions] if part)
    for attr, cls in classes:
        methods = [_entry(name, value) for name, value in _class_members(cls)]
        parts = [f"# {module.__name__}.{attr}", _entry(attr, cls), *methods]
        yield f".{attr}", "\n\n".join(part for part in parts if part)


def _public_members(module: ModuleType) -> list[tuple[str, Any]]:
    # `__all__` when the module declares it; else names defined in the module itself or in
    # its C accelerator (`heapq` functions live in `_heapq`), not ones it imported.
    names = getattr(module, "__all__", None)
    owners = {module.__name__, f"_{module.__name__}"}
    members = []
    for attr in sorted(names if names is not None else vars(module)):
        value = getattr(module, attr, None)
        # Routines and classes only: module data, and callables a program may have patched in
        # (pytest replaces `threading.excepthook` with a partial), would vary by process.
        if attr.startswith("_") or not (inspect.isroutine(value) or inspect.isclass(value)):
            continue
        if names is None and getattr(value, "__module__", None) not in owners:
            continue
        members.append((attr, value))
    return members


def _class_members(cls: type) -> list[tuple[str, Any]]:
    members = []
    for attr, raw in sorted(vars(cls).items()):
        if attr.startswith("_") and attr != "__init__":
            continue
        value = raw.__func__ if isinstance(raw, classmethod | staticmethod) else raw
        if callable(value) or isinstance(value, property):
            members.append((attr, value))
    return members


def _entry(name: str, value: Any) -> str:
    """`name(signature)` and the docstring, or '' when there is no docstring."""
    doc = inspect.getdoc(value) if not isinstance(value, property) else value.__doc__
    if not doc or (inspect.isclass(value) and doc == inspect.getdoc(object)):
        return ""
    return f"{name}{_signature(value)}\n{inspect.cleandoc(doc)}"


class _Elided:
    def __repr__(self) -> str:
        return "..."


_PLAIN_TYPES = (type(None), bool, int, float, str, bytes)


def _signature(value: Any) -> str:
    """The signature with non-literal defaults shown as `...`: their reprs carry process
    state (`logging.shutdown`'s default lists the live handlers)."""
    if isinstance(value, property):
        return " (property)"
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):  # builtins without a text signature
        return "(...)"
    parameters = [
        param.replace(default=_Elided())
        if param.default is not param.empty and not _is_plain(param.default)
        else param
        for param in signature.parameters.values()
    ]
    return str(signature.replace(parameters=parameters))


def _is_plain(value: object) -> bool:
    if isinstance(value, tuple):
        return all(_is_plain(item) for item in value)
    return isinstance(value, _PLAIN_TYPES)


def _record(doc: Document) -> dict[str, str]:
    return {
        "id": doc.id,
        "title": doc.title,
        "text": doc.text,
        "source": doc.source,
        "license": doc.license,
    }
