"""What the model is told: BFCL's prompting-mode system prompt, the held-out-function turn's
user message, and the function docs as OpenAI tool schemas for function-calling mode.

Texts come from `bfcl_eval.constants.default_prompts` (a plain module, safe to import); the
assembly mirrors `bfcl_eval.model_handler.utils.formulate_system_prompt` for BFCL's default
format (`ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&
style=classic`) and `convert_to_tool` for OpenAI chat-completions style. That module itself
needs tree-sitter and friends, so it is not imported here; tests compare both outputs.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from bfcl_eval.constants import default_prompts as bfcl_prompts
from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

from spade.evals.bfcl.data import FunctionDoc

STEP_LIMIT: int = bfcl_prompts.MAXIMUM_STEP_LIMIT
"""BFCL force-quits an entry once a turn has executed more than this many steps."""
HOLDOUT_MESSAGE_FC: str = bfcl_prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC
_HOLDOUT_MESSAGE_PROMPTING: str = bfcl_prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING


def system_prompt(functions: list[FunctionDoc]) -> str:
    """BFCL's default prompting-mode system prompt listing `functions` (JSON, indent 4)."""
    style = bfcl_prompts.PROMPT_STYLE_TEMPLATES["classic"]
    return bfcl_prompts.PROMPT_TEMPLATE_MAPPING["plaintext"].format(
        persona=style["persona"],
        task=style["task"],
        tool_call_format=style["tool_call_no_tag"].format(
            output_format=bfcl_prompts.OUTPUT_FORMAT_MAPPING["python"],
            param_types=bfcl_prompts.PARAM_TYPE_MAPPING["python"],
        ),
        multiturn_behavior=style["multiturn_behavior"],
        available_tools=style["available_tools"].format(
            format="json", functions=json.dumps(functions, indent=4)
        ),
    )


def first_turn_messages(
    messages: list[dict[str, Any]], functions: list[FunctionDoc]
) -> list[dict[str, Any]]:
    """The first turn with the system prompt in front (`system_prompt_pre_processing_chat_model`:
    merged into an existing system message, else inserted as one)."""
    prompt = system_prompt(functions)
    if messages and messages[0]["role"] == "system":
        first = {**messages[0], "content": prompt + "\n\n" + messages[0]["content"]}
        return [first, *messages[1:]]
    return [{"role": "system", "content": prompt}, *messages]


def holdout_message_prompting(functions: list[FunctionDoc]) -> str:
    # BFCL formats the list of docs with str(): a Python repr, not JSON.
    return _HOLDOUT_MESSAGE_PROMPTING.format(functions=functions)


def tool_schemas(functions: list[FunctionDoc]) -> list[dict[str, Any]]:
    """`convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)`."""
    tools = []
    for doc in copy.deepcopy(functions):
        # OpenAI names allow no "."; none of the multi-turn functions has one.
        doc["name"] = doc["name"].replace(".", "_")
        doc["parameters"]["type"] = "object"
        doc["parameters"]["properties"] = _cast_types(doc["parameters"]["properties"])
        tools.append({"type": "function", "function": doc})
    return tools


def _cast_types(properties: dict[str, Any]) -> dict[str, Any]:
    """`_cast_to_openai_type` with the OpenAPI mapping: Gorilla type names to JSON Schema's."""
    mapping = GORILLA_TO_OPENAPI
    for value in properties.values():
        if "type" not in value:
            value["type"] = "string"
        else:
            if value["type"] == "float":
                value["format"] = "float"
                value["description"] += " This is a float type value."
            value["type"] = mapping.get(value["type"], "string")
        if value["type"] not in ("array", "object"):
            continue
        if "properties" in value:
            value["properties"] = _cast_types(value["properties"])
        elif "items" in value:
            items = value["items"]
            items["type"] = mapping[items["type"]]
            if items["type"] == "array" and "items" in items:
                items["items"]["type"] = mapping[items["items"]["type"]]
            elif items["type"] == "object" and "properties" in items:
                items["properties"] = _cast_types(items["properties"])
    return properties
