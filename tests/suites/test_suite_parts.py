"""The small pieces of spade.suites: fingerprints, seeds, the random agent, refs, the schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from spade.envs.random_agent import templates, vocabulary
from spade.envs.tools import parse_tool_call
from spade.suites import (
    FreezeReport,
    RandomAgent,
    SuiteError,
    eval_seeds,
    manifest_errors,
    normalised_sha256,
    resolve_suite,
)
from spade.suites.manifest import semver_key
from spade.suites.store import ROOT_ENV_VAR
from tests.suites.suite_sources import SPELL, SUITE, VERSION


def test_normalised_hash_ignores_comments_docstrings_and_layout() -> None:
    a = 'def f(x):\n    """Doc."""\n    return x + 1  # add one\n'
    b = "# header\ndef f( x ):\n\n    return (x+1)\n"
    assert normalised_sha256(a) == normalised_sha256(b)
    assert normalised_sha256(a) != normalised_sha256(a.replace("x + 1", "x + 2"))
    # A string that is not a docstring is code: changing it changes the env.
    assert normalised_sha256(SPELL) != normalised_sha256(SPELL.replace("one letter", "a letter"))


def test_eval_seeds_are_fixed_distinct_and_clear_of_check_seeds() -> None:
    seeds = eval_seeds("s", "s/AEnv-v1", 50)
    assert seeds == eval_seeds("s", "s/AEnv-v1", 50)
    assert seeds[:10] == eval_seeds("s", "s/AEnv-v1")
    assert len(set(seeds)) == 50 and min(seeds) >= 1000 and max(seeds) < 2**31
    assert seeds != eval_seeds("s", "s/BEnv-v1", 50)


def test_random_agent_is_deterministic_and_uses_the_observation() -> None:
    observation = "Move with \\boxed{take N from H}. Heaps: 3, 5, 7."
    assert templates(observation) == ["take N from H"]
    assert "Heaps" in vocabulary(observation) and "boxed" not in vocabulary(observation)

    def actions(seed: int) -> list[str]:
        agent = RandomAgent(seed)
        agent.begin(observation)
        return [agent.act() for _ in range(40)]

    assert actions(1) == actions(1) != actions(2)
    assert all(a.startswith("\\boxed{") and a.endswith("}") for a in actions(1))
    assert any(a.startswith("\\boxed{take ") for a in actions(1))


def test_random_tool_calls_fit_the_schemas() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "book",
                "description": "Book a room.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "room": {"type": "string", "enum": ["red", "blue"]},
                        "people": {"type": "integer", "minimum": 1, "maximum": 8},
                        "note": {"type": "string"},
                        "urgent": {"type": "boolean"},
                        "days": {"type": "array", "items": {"type": "integer"}},
                        "price": {"type": "number", "minimum": 0, "maximum": 5},
                    },
                    "required": ["room", "people"],
                    "additionalProperties": False,
                },
            },
        }
    ]
    agent = RandomAgent(7, tools)
    agent.begin("Rooms red and blue hold up to 8 people.")
    for _ in range(50):
        name, arguments = parse_tool_call(agent.act(), tools)  # raises if it does not fit
        assert name == "book" and 1 <= arguments["people"] <= 8


def test_references_resolve_from_the_root_option_or_env_var(
    frozen: FreezeReport, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = frozen.path.parent.parent
    assert resolve_suite(f"{SUITE}@{VERSION}", root) == frozen.path
    monkeypatch.setenv(ROOT_ENV_VAR, str(root))
    assert resolve_suite(f"suite:{SUITE}@{VERSION}") == frozen.path
    with pytest.raises(SuiteError, match="give a version"):
        resolve_suite(SUITE)
    with pytest.raises(SuiteError, match="not a suite folder"):
        resolve_suite(tmp_path)


def test_manifest_checks_go_beyond_the_schema(frozen: FreezeReport) -> None:
    data = json.loads((frozen.path / "manifest.json").read_text())
    data["envs"].append(dict(data["envs"][0]))
    data["envs"][1]["id"] = "other/SpellEnv-v2"
    errors = manifest_errors(data)
    assert "envs[1].id: 'other/SpellEnv-v2' is not in suite namespace 'demo'" in errors
    assert "envs[1].id: 'other/SpellEnv-v2' does not end in -v1 (version)" in errors
    assert any(e.startswith("envs[1].file: 'envs/spell.py' repeats envs[0]") for e in errors)


def test_schema_is_a_valid_json_schema() -> None:
    from spade.suites.manifest import schema

    jsonschema.Draft202012Validator.check_schema(schema())
    assert manifest_errors({"name": "x"})[0].startswith("(top level): ")


def test_semver_ordering() -> None:
    versions = ["1.10.0", "1.2.0", "1.2.0-rc.1", "0.9.9"]
    assert sorted(versions, key=semver_key) == ["0.9.9", "1.2.0-rc.1", "1.2.0", "1.10.0"]
