"""The environment contract: sandboxed text and tool-use envs, their checks, gymnasium view."""

from spade.envs.checks import CheckResult, ValidationReport, validate_source
from spade.envs.gym import TextEnv, UnicodeText
from spade.envs.remote import EnvLoadError, EnvSpec, RemoteEnv, StepResult
from spade.envs.tools import (
    ToolCallError,
    ToolSchemaError,
    parse_tool_call,
    tool_call_action,
    validate_tools,
)

__all__ = [
    "CheckResult",
    "EnvLoadError",
    "EnvSpec",
    "RemoteEnv",
    "StepResult",
    "TextEnv",
    "ToolCallError",
    "ToolSchemaError",
    "UnicodeText",
    "ValidationReport",
    "parse_tool_call",
    "tool_call_action",
    "validate_source",
    "validate_tools",
]
