"""One entry's apps, built fresh from its initial config: execute calls, snapshot the state.

A call may use only the entry's own tool schemas, served by an involved app (upstream would
also run any other public method of those classes). Arguments are checked against the
method's signature and the schema's types first: a bad call changes nothing and is reported
as malformed. A method that raises is reported too; both reach the model as error text.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spade.evals.acebench.base_api import BaseApi
from spade.evals.acebench.calls import Call
from spade.evals.acebench.food_platform import FoodPlatform
from spade.evals.acebench.message import MessageApi
from spade.evals.acebench.reminder import ReminderApi
from spade.evals.acebench.travel import Travel

App = BaseApi | MessageApi | ReminderApi | FoodPlatform | Travel
PHONE_APPS: dict[str, type[MessageApi | ReminderApi | FoodPlatform]] = {
    "MessageApi": MessageApi,
    "ReminderApi": ReminderApi,
    "FoodPlatform": FoodPlatform,
}
APP_NAMES = ("BaseApi", *PHONE_APPS, "Travel")
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "float": (int, float),
    "boolean": (bool,),
    "list": (list,),
    "array": (list,),
    "dict": (dict,),
    "object": (dict,),
}


@dataclass(frozen=True)
class Outcome:
    """What one call returned, or why it could not run."""

    result: Any = None
    error: str | None = None
    malformed: bool = False
    """True for a call the model got wrong (unknown API, bad arguments), False when it ran."""

    def for_model(self) -> Any:
        return f"Error during execution: {self.error}" if self.error is not None else self.result


class Scenario:
    def __init__(
        self,
        involved_classes: Sequence[str],
        initial_config: Mapping[str, Any],
        functions: Sequence[Mapping[str, Any]],
    ) -> None:
        unknown = [name for name in involved_classes if name not in APP_NAMES]
        if unknown:
            raise ValueError(f"unknown ACEBench classes {unknown}; known: {', '.join(APP_NAMES)}")
        self.device = BaseApi(initial_config.get("BaseApi"))
        self.apps: dict[str, App] = {}
        for name in involved_classes:
            if name == "BaseApi":
                self.apps[name] = self.device
            elif name == "Travel":
                self.apps[name] = Travel()
            else:
                self.apps[name] = PHONE_APPS[name](self.device)
        # The device's own APIs reach it through any phone app, as upstream's subclasses do.
        providers = list(self.apps.values())
        if any(name in PHONE_APPS for name in self.apps):
            providers.append(self.device)
        self.tools: dict[str, tuple[Callable[..., Any], Mapping[str, Any]]] = {}
        for schema in functions:
            app = next((a for a in providers if schema["name"] in a.api), None)
            if app is not None:
                self.tools[schema["name"]] = (getattr(app, schema["name"]), schema)

    def execute(self, call: Call) -> Outcome:
        if call.name not in self.tools:
            return Outcome(
                error=f"unknown API {call.name!r}; available: {', '.join(self.tools)}",
                malformed=True,
            )
        method, schema = self.tools[call.name]
        problem = _argument_problem(method, schema, call.args)
        if problem:
            return Outcome(error=f"{call.name}: {problem}", malformed=True)
        try:
            return Outcome(result=method(**call.args))
        except Exception as exc:  # a backend bug or an upstream-faithful crash: tell the model
            return Outcome(error=f"{call.name} raised {type(exc).__name__}: {exc}")

    def state(self) -> dict[str, dict[str, Any]]:
        """The compared attributes of every involved class, as JSON would store them (upstream
        compares saved JSON, so integer keys become strings)."""
        return {
            name: json.loads(json.dumps({attr: getattr(app, attr) for attr in app.saved}))
            for name, app in self.apps.items()
        }


def _argument_problem(
    method: Callable[..., Any], schema: Mapping[str, Any], args: Mapping[str, Any]
) -> str | None:
    signature = inspect.signature(method)
    try:
        signature.bind(**args)
    except TypeError as exc:
        return str(exc)
    properties = schema.get("parameters", {}).get("properties", {})
    for key, value in args.items():
        spec = properties.get(key, {})
        if value is None and signature.parameters[key].default is None:
            continue
        problem = _type_problem(value, spec)
        if problem:
            return f"{key} {problem}"
    return None


def _type_problem(value: Any, spec: Mapping[str, Any]) -> str | None:
    kind = spec.get("type")
    allowed = _TYPES.get(kind) if isinstance(kind, str) else None
    # bool is an int in Python; a schema's integer never means a boolean.
    if allowed and (
        not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed)
    ):
        return f"must be {kind}, got {type(value).__name__} {value!r}"
    if "enum" in spec and value not in spec["enum"]:
        return f"must be one of {spec['enum']}, got {value!r}"
    if isinstance(value, list) and isinstance(spec.get("items"), Mapping):
        for index, item in enumerate(value):
            problem = _type_problem(item, spec["items"])
            if problem:
                return f"item {index} {problem}"
    return None
