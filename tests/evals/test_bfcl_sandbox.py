"""The BFCL backend worker runs in the sandbox, on every real backend, and holds there.

Two layers stand between a model's calls and the host: `call_guard` (which refuses anything
but backend methods on literals) and the sandbox around bfcl-eval's `eval`. The planted
payloads below are refused by the first; to show the second holds by itself, they are also
sent to the worker with its guard switched off (`tests/sandbox/unguarded_bfcl_worker.py`,
started exactly as the executor starts the real one), where they run as code: they must not
see the host's environment variables, files or processes, reach the network, or write
anywhere but the scratch dir. Without any sandbox the runner stops with one line (exit 2
from spade-eval), never falling back to an unsandboxed worker.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("bfcl_eval", reason="needs bfcl-eval (pip install --no-deps bfcl-eval mpmath)")

import bfcl_eval  # noqa: E402

from spade.evals.bfcl.executor import (  # noqa: E402
    WORKER_ENTRY,
    BackendSession,
    BackendWorker,
    score_in_worker,
)
from spade.evals.bfcl.executor import worker_config as bfcl_worker_config  # noqa: E402
from spade.sandbox import (  # noqa: E402
    PythonEntry,
    SandboxConfig,
    SandboxUnavailable,
    configure,
    start_entry,
)
from spade.sandbox.transport import Transport  # noqa: E402
from tests.cli.test_sandbox_choice import NO_SANDBOX, bare_machine  # noqa: E402
from tests.evals.bfcl_helpers import UMBRELLA, benchmark, entries, gold  # noqa: E402
from tests.sandbox.backends import sandbox_backends  # noqa: E402
from tests.sandbox.conftest import docker_url  # noqa: E402, F401 — the engine, for docker tests

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = sandbox_backends(300)
UNGUARDED = PythonEntry("tests.sandbox.unguarded_bfcl_worker",
                        packages=(*WORKER_ENTRY.packages, "tests"))  # fmt: skip
MATH_ENTRY = {
    "id": "multi_turn_base_planted",
    "initial_config": {},
    "involved_classes": ["MathAPI"],
}
BFCL_FOLDER = Path(bfcl_eval.__file__).resolve().parent


@pytest.fixture(params=BACKENDS)
def sandbox(request: pytest.FixtureRequest) -> SandboxConfig:
    url = request.getfixturevalue("docker_url") if request.param == "docker" else None
    return SandboxConfig(backend=request.param, docker_url=url)


def planted(code: str) -> str:
    """A call string that runs `code` when `eval`'d, and evaluates to the `out` it sets; as
    hex, so that BFCL's rewriting of method names leaves it alone."""
    expression = f"(lambda ns: (exec({code!r}, ns), ns.get('out'))[1])({{}})"
    return f"eval(bytes.fromhex('{expression.encode().hex()}').decode())"


def attempt(code: str) -> str:
    """`code` as a planted call that reports 'ok', or the exception that stopped it."""
    body = "\n".join("    " + line for line in code.strip().splitlines())
    return planted(f"try:\n{body}\n    out = 'ok'\nexcept BaseException as exc:\n"
                   "    out = type(exc).__name__ + ': ' + str(exc)")  # fmt: skip


@pytest.fixture
def unguarded(sandbox: SandboxConfig, monkeypatch: pytest.MonkeyPatch) -> Iterator[Transport]:
    monkeypatch.setenv("SPADE_BFCL_SECRET", "hunter2-bfcl")
    transport = start_entry(UNGUARDED, bfcl_worker_config(10.0, 1024, sandbox))
    try:
        transport.send({"op": "ping"})
        assert transport.receive(60) == {"ok": True}
        yield transport
    finally:
        transport.kill()


def execute(transport: Transport, calls: list[str]) -> list[str]:
    transport.send({"op": "execute", "namespace": "planted", "entry": MATH_ENTRY,
                    "long_context": False, "calls": calls, "history": []})  # fmt: skip
    reply = transport.receive(20)
    assert reply["ok"], reply
    results: list[str] = reply["results"]
    return results


def test_planted_code_runs_unguarded_but_only_as_nobody_in_scratch(unguarded: Transport) -> None:
    who = planted("import json, os\nout = json.dumps([os.getuid(), os.getgid(), os.getcwd()])")
    uid, gid, cwd = json.loads(execute(unguarded, [who])[0])
    assert (uid, gid) == (65534, 65534)
    assert cwd != os.getcwd() and "scratch" in cwd
    assert execute(unguarded, ["add(a=1, b=2)"]) == ['{"result": 3}']  # backends still work


def test_planted_code_sees_no_host_secrets(
    unguarded: Transport, sandbox: SandboxConfig, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2-file")
    environment, shadow, own_file, pids = execute(unguarded, [
        planted("import os\nout = repr(dict(os.environ))"),
        attempt("out = open('/etc/shadow').read()"),
        attempt(f"open({str(secret)!r}).read()"),
        attempt(f"import os\nos.kill({os.getpid()}, 0)"),
    ])  # fmt: skip
    assert "SPADE_BFCL_SECRET" not in environment and "hunter2" not in environment
    assert shadow.startswith(("PermissionError", "FileNotFoundError")), shadow
    assert own_file.startswith(("PermissionError", "FileNotFoundError")), own_file
    assert pids.startswith(("ProcessLookupError", "PermissionError")), pids
    if sandbox.backend != "unsafe-process":  # that one shows the host's files per permissions
        (repository,) = execute(unguarded, [attempt(f"open({str(ROOT / 'pyproject.toml')!r})")])
        assert repository.startswith("FileNotFoundError"), repository


def test_planted_code_cannot_reach_the_network(unguarded: Transport) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.5)
        port = server.getsockname()[1]
        local, outside = execute(unguarded, [
            attempt(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), 2)"),
            attempt("import socket\nsocket.create_connection(('1.1.1.1', 53), 2)"),
        ])  # fmt: skip
        assert local.startswith(("ConnectionRefusedError", "OSError")), local
        assert outside.startswith(("OSError", "TimeoutError", "ConnectionRefusedError")), outside
        with pytest.raises(TimeoutError):
            server.accept()


def test_planted_code_writes_only_to_scratch(
    unguarded: Transport, sandbox: SandboxConfig, tmp_path: Path
) -> None:
    token = uuid.uuid4().hex[:12]
    inside_bfcl = planted("import os, bfcl_eval\nout = os.path.dirname(bfcl_eval.__file__)")
    (package_folder,) = execute(unguarded, [inside_bfcl])
    host_targets = [tmp_path / f"planted-{token}", Path(f"/tmp/planted-{token}"),
                    Path.home() / f"planted-{token}", ROOT / f"planted-{token}",
                    BFCL_FOLDER / f"planted-{token}"]  # fmt: skip
    targets = [str(p) for p in host_targets[:-1]] + [f"{package_folder}/planted-{token}"]
    results = execute(unguarded, [attempt(f"open({t!r}, 'w').write('x')") for t in targets]
                      + [attempt("open('in-scratch', 'w').write('x')")])  # fmt: skip
    assert results[-1] == "ok"
    refused = dict(zip(targets, results, strict=False))
    if sandbox.backend == "docker":  # a container has its own size-capped tmpfs /tmp
        assert refused.pop(f"/tmp/planted-{token}") == "ok"
    assert all(r != "ok" for r in refused.values()), refused
    assert [p for p in host_targets if p.exists()] == []


def test_the_guard_still_refuses_what_the_sandbox_contains(sandbox: SandboxConfig) -> None:
    entry = next(e for e in entries().values() if "MathAPI" in e.involved_classes)
    calls = [planted("out = 'ran'"), "open(file='/etc/passwd')", "__import__(name='os')"]
    with BackendWorker(10.0, 1024, sandbox) as worker:
        assert worker.backend.name == sandbox.backend
        results = BackendSession(worker, entry).execute(calls)
    assert all("is not allowed" in r for r in results), results


def test_the_worker_scores_like_bfcl_on_each_backend(sandbox: SandboxConfig) -> None:
    table = entries()
    chosen = benchmark().slice_ids(list(table), 8, seed=5)
    first = table[chosen[0]]
    with BackendWorker(30.0, 4096, sandbox) as worker:
        verdicts = [score_in_worker(worker, table[i], gold(table[i])) for i in chosen]
        wrong = score_in_worker(worker, first, [[] for _ in first.ground_truth])
    assert [v["error_message"] for v in verdicts if not v["valid"]] == []
    assert wrong["error_type"] == "multi_turn:empty_turn_model_response"


def test_the_runner_stops_when_no_sandbox_answers() -> None:
    entry = entries()["multi_turn_base_0"]
    configure(SandboxConfig(backend="docker", docker_url="unix:///nonexistent/docker.sock"))
    try:
        with pytest.raises(SandboxUnavailable, match="^docker backend: no Docker engine"):
            benchmark().run([entry.id], lambda batch: [], None)
    finally:
        configure(None)


def predictions_file(tmp_path: Path) -> Path:
    table = entries()
    lines = [{"benchmark": UMBRELLA, "id": i, "output": gold(table[i])}
             for i in ["multi_turn_base_0", "multi_turn_miss_func_0"]]  # fmt: skip
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def spade_eval(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    predictions, out = predictions_file(tmp_path), tmp_path / "out"
    command = [sys.executable, "-m", "spade.cli.eval", "--predictions", str(predictions),
               "--output", str(out), *flags]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env=bare_machine(tmp_path))  # fmt: skip


def test_spade_eval_without_a_sandbox_exits_2_before_scoring(tmp_path: Path) -> None:
    started = time.monotonic()
    result = spade_eval(tmp_path)
    assert result.returncode == 2, result.stderr
    # The message is one line; spade-eval's progress bar may already stand on that line
    # (its up-front sandbox check covers the code and suite runners only).
    assert result.stderr.count(f"error: spade-eval: {NO_SANDBOX}\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out" / "results.json").exists()
    assert time.monotonic() - started < 120


def test_spade_eval_scores_bfcl_under_the_unsafe_opt_in_and_says_so(tmp_path: Path) -> None:
    result = spade_eval(tmp_path, "--sandbox", "unsafe-process")
    assert result.returncode == 0, result.stderr
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    assert document["benchmarks"][UMBRELLA]["metrics"]["accuracy"]["value"] == 1.0
    assert document["settings"]["sandbox"]["backend"] == "unsafe-process"
    assert document["settings"]["sandbox"]["unsafe"] is True
