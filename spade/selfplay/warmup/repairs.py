"""Repair examples for the designer's warm start: the loop's repair prompt, answered.

The loop gives a failed design `designer.repair_attempts` repairs: the request, the failed
reply and what the checks said (`repair_messages`). On the warm-started designer of
2026-12-02 (runs/warmd3) the first replies were env-shaped but none valid (20 of 24 syntax
errors, 7 of them replies cut off at the token limit), and the repairs, answering a prompt no
warm-start example had shown, fell back to the base model's style. A repair example shows
that prompt with a valid source broken the ways the designer's replies break, and the checks'
own words for it, answered by the valid source.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from spade.envs.checks import validate_source
from spade.envs.scaffold import Scaffold
from spade.sandbox import SandboxConfig
from spade.selfplay.designer import (
    DesignRequest,
    code_problem,
    extract_env,
    failure_text,
    repair_messages,
)

_CLOSERS = re.compile(r"[)\]}]")
_IMPORT = re.compile(r"^import (\w+)\n", re.MULTILINE)


def cut_off(reply: str, rng: random.Random) -> str | None:
    """The reply stopped mid-line between 40% and 90% of its length: no closing fence, as a
    reply that ran into the token limit."""
    return reply[: int(len(reply) * rng.uniform(0.4, 0.9))]


def dropped_bracket(reply: str, rng: random.Random) -> str | None:
    """One closing bracket of the code left out: the designer's commonest syntax slip."""
    spots = [m.start() for m in _CLOSERS.finditer(reply)]
    if not spots:
        return None
    spot = rng.choice(spots)
    return reply[:spot] + reply[spot + 1 :]


def missing_import(reply: str, rng: random.Random) -> str | None:
    """An import the code uses left out: a NameError when the env runs."""
    found = list(_IMPORT.finditer(reply))
    if not found:
        return None
    line = rng.choice(found)
    return reply[: line.start()] + reply[line.end() :]


BREAKS: dict[str, Callable[[str, random.Random], str | None]] = {
    "cut_off": cut_off,
    "dropped_bracket": dropped_bracket,
    "missing_import": missing_import,
}


def reply_failure(
    reply: str, sandbox: SandboxConfig | None, seeds: int, scaffold: Scaffold = "none"
) -> str | None:
    """What the loop's checks say of a reply (its near-duplicate guard aside); None: valid."""
    code = extract_env(reply, scaffold)
    if code is None:
        return code_problem(reply)
    report = validate_source(code, "env.py", seeds=seeds, config=sandbox, deadline_s=30.0)
    return None if report.valid else failure_text(report)


def repair_example(
    request: DesignRequest,
    reply: str,
    rng: random.Random,
    sandbox: SandboxConfig | None,
    seeds: int,
) -> tuple[list[dict[str, str]], str] | None:
    """The repair prompt of `reply` (a valid env) broken one of the `BREAKS` ways, tried in a
    random order until one fails the checks, and the way it was broken; None if none does."""
    for name in rng.sample(list(BREAKS), len(BREAKS)):
        broken = BREAKS[name](reply, rng)
        if broken is None:
            continue
        failure = reply_failure(broken, sandbox, seeds, request.scaffold)
        if failure is not None:
            return repair_messages(request, broken, failure), name
    return None
