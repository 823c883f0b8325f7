"""The validator accepts good envs and names the right check for each kind of broken one."""

import pytest

from spade.envs import parse_tool_call, validate_source
from tests.envs.sources import BROKEN, GOOD_TEXT, GOOD_TOOL, ORACLE_LOCK


@pytest.mark.parametrize("source", [GOOD_TEXT, GOOD_TOOL], ids=["text", "tool_use"])
def test_good_env_is_valid(source: str) -> None:
    report = validate_source(source)
    assert report.valid, [c for c in report.checks if not c.passed]
    assert report.reference_return == 1.0
    assert [c.name for c in report.checks][:2] == ["loads", "single_env_class"]
    assert report.metadata["kind"] in {"game", "tool_use"}


def test_tool_env_reports_its_tools() -> None:
    report = validate_source(GOOD_TOOL)
    assert report.tools is not None and len(report.tools) == 3
    assert report.max_turns == 10


@pytest.mark.parametrize("check", sorted(BROKEN))
def test_broken_env_fails_the_right_check(check: str) -> None:
    report = validate_source(BROKEN[check])
    assert not report.valid
    first_failure = report.failed()[0]
    assert first_failure.name == check, report.failed()
    assert first_failure.detail  # says why


def test_fatal_failure_marks_the_rest_not_run() -> None:
    report = validate_source(BROKEN["loads"])
    assert "SyntaxError" in report.checks[0].detail
    assert all(c.detail.startswith("not run") for c in report.checks[1:])
    assert report.class_name is None and report.reference_return is None


def test_one_action_oracle_with_feedback_is_multi_turn() -> None:
    # solution() knows the code, so it is one guess; a player gets feedback and guesses again.
    report = validate_source(ORACLE_LOCK)
    assert report.valid, report.failed()
    multi_turn = next(c for c in report.checks if c.name == "multi_turn")
    assert "goes on after the first action" in multi_turn.detail


def test_tool_probes_are_well_formed_calls_of_each_tool() -> None:
    from spade.envs.checks import _tool_probes

    def tool(name: str, parameters: dict[str, object]) -> dict[str, object]:
        return {"type": "function", "function": {"name": name, "description": name,
                                                 "parameters": parameters}}  # fmt: skip

    tools = [
        tool("book", {"type": "object", "required": ["slot", "where", "items", "n", "ok"],
                      "properties": {
                          "slot": {"type": "string", "enum": ["am", "pm"]},
                          "where": {"type": "object", "required": ["number"],
                                    "properties": {"number": {"type": "integer", "minimum": 3}}},
                          "items": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                          "n": {"type": "number", "exclusiveMaximum": -2},
                          "ok": {"type": "boolean"}}}),
        tool("ping", {"type": "object"}),
        # No value of ours fits this pattern: no probe rather than an ill-formed one.
        tool("code", {"type": "object", "required": ["pin"],
                      "properties": {"pin": {"type": "string", "pattern": "^[0-9]{4}$"}}}),
    ]  # fmt: skip
    probes = _tool_probes(tools)
    assert [parse_tool_call(p, tools)[0] for p in probes] == ["book", "ping"]
    assert parse_tool_call(probes[0], tools)[1] == {
        "slot": "am", "where": {"number": 3}, "items": ["x"], "n": -3, "ok": False
    }  # fmt: skip
