"""`spade.sandbox.start_entry`: a trusted module run in the sandbox with read-only packages.

On every real backend (bubblewrap, the unsafe-process opt-in, docker where an engine can be
had): the entry starts past its handshake with its arguments; it sees the packages it names,
read-only, and (on bubblewrap and docker) no other package of the host; it gets the sandbox's
cleared environment, limits and scratch dir. A package that is missing, fails to import or
hangs in the sandbox is one line (`SandboxUnavailable`) or a load timeout, never a silent
death or an unsandboxed run. The probe module (`probe_entry.py`) runs code it is sent.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import tests
from spade.sandbox import (
    PythonEntry,
    SandboxConfig,
    SandboxTimeout,
    SandboxUnavailable,
    start_entry,
)
from spade.sandbox.transport import Transport
from tests.sandbox.backends import sandbox_backends

BACKENDS = sandbox_backends(180)
PROBE = PythonEntry("tests.sandbox.probe_entry", args=("first", "--second"), packages=("tests",))
TESTS_FOLDER = Path(tests.__file__).resolve().parent


@pytest.fixture(params=BACKENDS)
def config(request: pytest.FixtureRequest) -> SandboxConfig:
    url = request.getfixturevalue("docker_url") if request.param == "docker" else None
    return SandboxConfig(backend=request.param, memory_mb=512, open_files=48,
                         load_timeout_s=30.0, docker_url=url)  # fmt: skip


@pytest.fixture
def probe(config: SandboxConfig) -> Iterator[Transport]:
    transport = start_entry(PROBE, config)
    try:
        assert transport.receive(10)["argv"] == ["first", "--second"]
        yield transport
    finally:
        transport.kill()


def run(transport: Transport, code: str) -> Any:
    transport.send({"code": code})
    reply = transport.receive(10)
    assert "error" not in reply, reply["error"]
    return reply["out"]


def outcome(transport: Transport, code: str) -> str:
    """'ok' when `code` ran through, else the exception's type name."""
    checked = f"try:\n    {code}\n    out = 'ok'\n"
    checked += "except BaseException as exc:\n    out = type(exc).__name__"
    return str(run(transport, checked))


def test_the_entry_sees_its_packages_read_only(probe: Transport, config: SandboxConfig) -> None:
    assert run(probe, "import tests.sandbox.probe_entry as m\nout = m.__name__") == (
        "tests.sandbox.probe_entry"
    )
    planted = TESTS_FOLDER / "planted-by-entry"
    inside = run(probe, "import os, tests\nout = os.path.dirname(tests.__file__)")
    assert outcome(probe, f"open({inside + '/planted-by-entry'!r}, 'w').write('x')") != "ok"
    assert not planted.exists()
    assert outcome(probe, "import yaml") == "ModuleNotFoundError"  # in site-packages, not named
    if config.backend != "unsafe-process":  # that one shows the host's folders as they are
        assert outcome(probe, "import spade") == "ModuleNotFoundError"  # tests' sibling
        assert outcome(probe, f"open({str(TESTS_FOLDER.parent / 'pyproject.toml')!r})") != "ok"


def test_the_entry_gets_the_sandbox_environment_and_limits(
    config: SandboxConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPADE_ENTRY_SECRET", "do-not-leak")
    transport = start_entry(PROBE, config)
    try:
        transport.receive(10)
        environment = run(transport, "import os\nout = dict(os.environ)")
        assert "SPADE_ENTRY_SECRET" not in environment
        assert "do-not-leak" not in str(environment)
        assert run(transport, "import os\nout = os.getuid()") == 65534
        limits = "import resource as r\nout = [r.getrlimit(r.RLIMIT_NOFILE)[0], "
        limits += "r.getrlimit(r.RLIMIT_AS)[0]]"
        files, memory = run(transport, limits)
        assert files == config.open_files
        if config.backend != "docker":  # docker's limit is the container's memory cgroup
            assert memory == config.memory_mb << 20
        assert outcome(transport, "open('scratch-file', 'w').write('x' * 1000)") == "ok"
    finally:
        transport.kill()


def test_a_package_missing_here_is_one_line(config: SandboxConfig) -> None:
    entry = PythonEntry("tests.sandbox.probe_entry", packages=("tests", "no_such_spade_package"))
    with pytest.raises(SandboxUnavailable) as caught:
        start_entry(entry, config)
    assert str(caught.value) == (
        "cannot run tests.sandbox.probe_entry in the sandbox: package 'no_such_spade_package' "
        f"is not installed for {sys.executable}"
    )


@pytest.fixture
def readable_tmp() -> Iterator[Path]:
    """A temporary folder uid 65534 can read (pytest's tmp_path is root's alone), as an
    installed package's folder is."""
    folder = Path(tempfile.mkdtemp(prefix="spade-entry-test-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def planted_package(folder: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A package whose import runs `body`, importable on this host (so it can be named)."""
    name = f"spade_planted_{uuid.uuid4().hex[:8]}"
    (folder / name).mkdir(mode=0o755)
    (folder / name / "__init__.py").write_text(body)
    monkeypatch.syspath_prepend(str(folder))
    return name


def test_a_package_that_cannot_import_inside_is_one_line(
    config: SandboxConfig, readable_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = planted_package(readable_tmp, "raise ImportError('not in here')\n", monkeypatch)
    with pytest.raises(SandboxUnavailable) as caught:
        start_entry(PythonEntry("tests.sandbox.probe_entry", packages=("tests", name)), config)
    message = str(caught.value)
    assert message.startswith(f"the {config.backend} sandbox cannot run tests.sandbox.probe_entry")
    assert f"cannot import {name}: " in message and "\n" not in message


def test_a_package_that_hangs_is_a_load_timeout(
    config: SandboxConfig, readable_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = planted_package(readable_tmp, "while True:\n    pass\n", monkeypatch)
    hanging = replace(config, load_timeout_s=3.0)
    with pytest.raises(SandboxTimeout, match="3 s limit"):
        start_entry(PythonEntry("tests.sandbox.probe_entry", packages=("tests", name)), hanging)


class NoEntries:
    """A backend that can only start env workers (a third-party one, say)."""

    name = "plain"

    def spawn(self, config: SandboxConfig) -> Transport:
        raise AssertionError("must not be started")

    def isolation(self) -> dict[str, Any]:
        return {}


def test_a_backend_without_entry_points_refuses_in_one_line() -> None:
    with pytest.raises(SandboxUnavailable, match="^the plain sandbox backend cannot run x$"):
        start_entry(PythonEntry("x"), SandboxConfig(), NoEntries())
