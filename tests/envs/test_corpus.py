"""The env checks against a corpus written for them (tests/envs/corpus/), on every sandbox
backend that can run here.

`valid/` holds envs of many styles that follow the contract: each must pass every check (no
false rejections). `broken/` holds envs that each break one rule; the first line of each names
the check that must reject it (`# expect: NAME`), and that check must be the report's first
failure. Together they cover every check.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from spade.envs import RemoteEnv, validate_source
from spade.envs.checks import CHECK_NAMES
from spade.envs.episode import play_actions
from spade.sandbox import EnvCallError, SandboxConfig, SandboxError, resolve_backend
from spade.suites.reference import reference_scores

BACKENDS = ("bwrap", "unsafe-process", "docker")
"""Sandbox backends (spade.sandbox names) the corpus runs on; one that cannot run here skips,
saying why. The default test run uses DEFAULT_BACKEND; the others are marked slow, and docker
also `docker` (a session may have to start an engine first)."""
DEFAULT_BACKEND = "bwrap"

CORPUS = Path(__file__).parent / "corpus"
VALID = sorted((CORPUS / "valid").glob("*.py"))
BROKEN = sorted((CORPUS / "broken").glob("*.py"))

# What some valid envs are in the corpus for, as the check detail that shows it.
EXERCISES = {
    "alarm_vault": ("multi_turn", "goes on after the first action '\\\\boxed{"),  # other seed
    "rune_cipher": ("multi_turn", "solution() is one action"),
    "slotted_thermostat": ("multi_turn", "solution() is one action"),
    "safe_notes_tools": ("multi_turn", '"name": "read_note"'),  # a schema-built tool call
    "ledge_walk": ("ends_within_max_turns", "no max_turns declared"),
    "parcel_conveyor": ("ends_within_max_turns", "no max_turns declared"),
    "shell_hunt": ("ends_within_max_turns", "no max_turns declared"),
    "tile_rotation": ("ends_within_max_turns", "no max_turns declared"),
    "cave_keys": ("ends_within_max_turns", "truncated the episode after 40"),
    "word_ladder": ("ends_within_max_turns", "terminated the episode after 1 probe"),
    "tower_levels": ("difficulty_levels", "4 levels; from level 0 to 3: solutions 3.0 -> 31.0"),
}
# Valid envs that raise when stepped after their episode ended (allowed: nobody does that).
RAISE_AFTER_END = ("alarm_vault", "parcel_conveyor", "riddle_chain", "ticket_triage_tools")


def expected_check(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name}: first line must be '# expect: CHECK'"
    return first.removeprefix("# expect: ").strip()


def _marks(backend: str) -> list[pytest.MarkDecorator]:
    marks = [] if backend == DEFAULT_BACKEND else [pytest.mark.slow]
    return marks + ([pytest.mark.docker] if backend == "docker" else [])


@pytest.fixture(scope="session", params=[pytest.param(b, marks=_marks(b)) for b in BACKENDS])
def sandbox(request: pytest.FixtureRequest) -> SandboxConfig:
    name = request.param
    url = request.getfixturevalue("docker_url") if name == "docker" else None
    config = SandboxConfig(backend=name, docker_url=url)
    try:
        backend = resolve_backend(config)
    # RuntimeError: spade.sandbox's SandboxUnavailable (no such sandbox on this machine).
    except (SandboxError, RuntimeError) as exc:
        pytest.skip(f"sandbox backend {name!r} cannot run here: {exc}")
    if backend.name != name:
        pytest.skip(f"spade.sandbox knows no backend {name!r} (it resolved to {backend.name!r})")
    return config


def test_corpus_has_twenty_valid_envs_and_a_broken_one_for_every_check() -> None:
    assert len(VALID) >= 20
    expected = {path.stem: expected_check(path) for path in BROKEN}
    assert set(expected.values()) <= set(CHECK_NAMES), expected
    assert set(CHECK_NAMES) - set(expected.values()) == set()


@pytest.mark.parametrize("path", VALID + BROKEN, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_corpus_env_imports_only_the_standard_library(path: Path) -> None:
    if path in BROKEN and expected_check(path) == "loads":
        pytest.skip("broken at import on purpose")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names}  # fmt: skip
    modules |= {node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module}  # fmt: skip
    assert {m.split(".")[0] for m in modules} <= sys.stdlib_module_names


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_env_passes_every_check(path: Path, sandbox: SandboxConfig) -> None:
    report = validate_source(path.read_text(encoding="utf-8"), path.name, config=sandbox)
    assert report.valid, [f"{c.name}: {c.detail}" for c in report.failed()]
    assert [c.name for c in report.checks] == list(CHECK_NAMES)
    assert report.reference_return == 1.0
    if path.stem in EXERCISES:
        name, shows = EXERCISES[path.stem]
        detail = next(c.detail for c in report.checks if c.name == name)
        assert shows in detail, detail


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_broken_env_fails_its_named_check_first(path: Path, sandbox: SandboxConfig) -> None:
    report = validate_source(path.read_text(encoding="utf-8"), path.name, config=sandbox)
    assert not report.valid
    first = report.failed()[0]
    assert first.name == expected_check(path), [f"{c.name}: {c.detail}" for c in report.failed()]
    assert first.detail and not first.detail.startswith("not run")


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_env_reference_scores(path: Path, sandbox: SandboxConfig) -> None:
    # Its own solution solves fresh seeds; the random agent's actions never crash it.
    with RemoteEnv(path.read_text(encoding="utf-8"), path.name, sandbox) as env:
        scores = reference_scores(env, [11, 12, 13])
    assert scores.solution_return == 1.0
    assert 0.0 <= scores.random_return <= 1.0


@pytest.mark.parametrize("stem", RAISE_AFTER_END)
def test_env_that_raises_after_the_end_is_in_the_corpus(stem: str, sandbox: SandboxConfig) -> None:
    # Guards the corpus: these envs must really raise there, or they prove nothing.
    path = CORPUS / "valid" / f"{stem}.py"
    with RemoteEnv(path.read_text(encoding="utf-8"), path.name, sandbox) as env:
        env.reset(0)
        episode = play_actions(env, 0, env.solution())
        assert episode.solved
        with pytest.raises(EnvCallError, match="raised|Error"):
            env.step(episode.actions[-1])
