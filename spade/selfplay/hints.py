"""Privileged hints: written by the policy from the env code, rejected when they leak values.

A hint must give strategy, never concrete answer values: a leaked value teaches the designer
to make envs that are unsolvable without the leak. The leak check gathers the values an
answer would need — tokens of `solution()`'s actions and the env's hidden state right after
`reset(seed)`, over several seeds — and rejects a hint that names any of them, unless the
value is public (it appears in the first observation or in the tool schemas).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from spade.envs.remote import RemoteEnv
from spade.envs.scaffold import design_part

HINT_REQUEST = (
    "Here is an environment's code. Write a short strategy hint (at most 3 sentences) that "
    "would help a player solve it: the method to use, what to look for, what to avoid. Never "
    "state concrete answer values (secret numbers, positions, words, final answers): the "
    "hint must apply to every seed. Reply with the hint only.\n\n```python\n{code}\n```"
)
_TOKEN = re.compile(r"-?\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_']*")
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def hint_messages(code: str) -> list[dict[str, str]]:
    """The hint request for an env source; a scaffolded env shows the design the policy wrote
    (`design_part`), not the scaffold every env shares."""
    return [{"role": "user", "content": HINT_REQUEST.format(code=design_part(code))}]


def clean_hint(reply: str, max_chars: int = 600) -> str:
    text = reply.strip().strip("`").strip()
    return text[:max_chars]


@dataclass(frozen=True)
class LeakReport:
    leaked: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.leaked


def secret_values(env: RemoteEnv, seeds: Iterable[int]) -> tuple[set[str], set[str]]:
    """(values an answer needs, public text tokens), gathered by playing `seeds`."""
    secrets: set[str] = set()
    public: set[str] = set()
    tools = json.dumps(env.spec.tools or [])
    public.update(_tokens(tools))
    for seed in seeds:
        observation, _ = env.reset(seed)
        public.update(_tokens(observation))
        for action in env.solution():
            secrets.update(_tokens(_action_payload(action)))
        secrets.update(_flatten_values(env.state()))
    return secrets, public


def check_hint(hint: str, secrets: set[str], public: set[str]) -> LeakReport:
    """Reject a hint that names a secret value that is not public."""
    words = set(_tokens(hint))
    leaked = sorted(v for v in (secrets - public) & words if _significant(v))
    return LeakReport(tuple(leaked))


def _significant(value: str) -> bool:
    # Single digits and short words ("go", "up") are too common to call a leak.
    if re.fullmatch(r"-?\d+(?:\.\d+)?", value):
        return len(value.lstrip("-")) >= 2
    return len(value) >= 4


def _action_payload(action: str) -> str:
    boxed = _BOXED.findall(action)
    if boxed:
        return " ".join(boxed)
    try:
        call = json.loads(action)
    except json.JSONDecodeError:
        return action
    return json.dumps(call.get("arguments", {})) if isinstance(call, dict) else action


def _flatten_values(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for item in value.values():
            found |= _flatten_values(item)
    elif isinstance(value, list):
        for item in value[:200]:
            found |= _flatten_values(item)
    elif isinstance(value, bool) or value is None:
        pass
    elif isinstance(value, (int, float)):
        found.add(_number(value))
    elif isinstance(value, str) and len(value) <= 64 and not value.startswith("<"):
        found.update(_tokens(value))
    return found


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]
