"""The Environment Designer role: its prompt, and getting valid env code out of its replies.

The designer sees one corpus document, a target skill and difficulty, about two reference
environments from memory (code excerpt, win rate, regret) and one negative example, plus the
env contract. It answers with a complete Python file; `spade-suite check`'s validator decides
whether it enters the pool, and a failed check is fed back for a repair attempt.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spade.envs.scaffold import Scaffold, assemble

if TYPE_CHECKING:
    from spade.envs.checks import ValidationReport

KINDS = ("game", "reasoning", "tool_use")

CONTRACT = """\
Write ONE Python file (standard library only) defining exactly one class whose name ends in
`Env`, constructible with no arguments (it may take `max_turns=...`), with:
- `metadata = {"kind": KIND, "skill": SKILL, "difficulty": DIFFICULTY}` as a class attribute;
- `reset(self, seed=None) -> (observation: str, info: dict)`: all randomness from
  `random.Random(seed)`; the same seed must give the same episode; the observation states
  the task and the command format;
- `step(self, action: str) -> (observation, reward, terminated, truncated, info)`: reward is
  the progress so far in [0, 1] (not an increment); reward 1.0 with terminated=True only when
  solved; when the `max_turns` budget the task states is used up, terminated=True with the
  partial credit earned; an invalid action gets an error observation, never an exception;
- `solution(self) -> list[str]`: called right after reset(seed), the actions that reach 1.0;
- `close(self)`.
Text envs read the agent's command from `\\boxed{...}`. Tool-use envs also define `tools`
(OpenAI function schemas) and take actions as JSON `{"name": ..., "arguments": {...}}`.
Optionally a difficulty knob: `difficulty_levels = N` and `reset(self, seed=None,
options=None)` taking level `options["difficulty"]` in 0..N-1 (default N-1), level 0 short.
The env must be genuinely multi-turn: hidden state revealed by acting, partial credit for
progress (random or empty commands must score well below the solution), several actions
needed. No one-shot quizzes."""

SCAFFOLD_CONTRACT = """\
Write Python (standard library only) defining exactly one class whose name ends in `Env` and
that subclasses `TextScaffold`, already defined above your code (with `random` and `re`
imported): its `reset(seed)` calls your `setup`, its `step(action)` reads the agent's command
from `\\boxed{...}`, passes it to your `act`, keeps the best progress as the reward and ends
the episode at progress 1.0 or after `max_turns` turns. Define:
- `metadata = {"kind": KIND, "skill": SKILL, "difficulty": DIFFICULTY}` and `max_turns = N`;
- `setup(self, rng) -> str`: draw the hidden state with `rng` (a `random.Random`) and return
  the task: what to find and the command format;
- `act(self, command) -> (feedback: str, progress: float | None)`: progress so far in [0, 1],
  1.0 when solved, None for an invalid command;
- `solution(self) -> list[str]`: called right after setup, the `\\boxed{...}` actions that
  solve it.
The env must be genuinely multi-turn: hidden state revealed by acting, partial credit for
progress, several actions needed. No one-shot quizzes."""


@dataclass(frozen=True)
class Reference:
    """A memory entry as the designer sees it."""

    excerpt: str
    win_rate: float | None
    regret: float | None

    def describe(self) -> str:
        if self.win_rate is None or self.regret is None:
            stats = "a reference example"
        else:
            stats = f"agent win rate {self.win_rate:.2f}, regret {self.regret:+.2f}"
        return f"({stats})\n```python\n{self.excerpt}\n```"


@dataclass(frozen=True)
class DesignRequest:
    document_id: str
    document: str
    skill: str
    difficulty: str
    kind: str
    references: tuple[Reference, ...] = ()
    negative: str | None = None
    scaffold: Scaffold = "none"
    """"text": the reply subclasses the text-env scaffold (`spade.envs.scaffold`)."""


def designer_messages(request: DesignRequest) -> list[dict[str, str]]:
    parts = [
        "You are the Environment Designer. You write executable training environments that "
        "teach a reasoning agent a skill, grounded in a source document.",
        f"Target: kind={request.kind}, skill={request.skill}, difficulty={request.difficulty}. "
        "Aim for environments the agent solves about half the time.",
    ]
    if request.document:
        parts.append(f"Source document ({request.document_id}):\n<<<\n{request.document}\n>>>")
    for index, reference in enumerate(request.references, 1):
        parts.append(f"Reference environment {index} {reference.describe()}")
    if request.negative:
        parts.append(request.negative)
    parts.append(SCAFFOLD_CONTRACT if request.scaffold == "text" else CONTRACT)
    parts.append("Reply with the complete file in one ```python block and nothing else.")
    return [{"role": "user", "content": "\n\n".join(parts)}]


def repair_messages(request: DesignRequest, reply: str, failure: str) -> list[dict[str, str]]:
    """The same conversation with the failed attempt and what the validator said."""
    return [
        *designer_messages(request),
        {"role": "assistant", "content": reply},
        {
            "role": "user",
            "content": f"The environment failed validation: {failure}\n"
            "Fix it and reply with the complete corrected file in one ```python block.",
        },
    ]


_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


def _code_blocks(reply: str) -> list[str]:
    """The reply's fenced code blocks in order; a reply cut off by the token limit inside an
    unclosed block yields that block's text."""
    blocks = [m.group(1) for m in _FENCE.finditer(reply)]
    unclosed = reply.rfind("```")
    if unclosed != -1 and not blocks:
        blocks.append(reply[unclosed:].split("\n", 1)[-1])
    return blocks


def extract_code(reply: str) -> str | None:
    """The env source in a reply: the last fenced block that parses and defines a `*Env`
    class, else the whole reply if it does; None when there is no such code."""
    for code in [*_code_blocks(reply)[::-1], reply]:
        if defines_env_class(code):
            return code.strip() + "\n"
    return None


def extract_env(reply: str, scaffold: Scaffold) -> str | None:
    """The env source a reply makes: its code (`extract_code`) on the request's scaffold."""
    code = extract_code(reply)
    return None if code is None else assemble(code, scaffold)


def code_problem(reply: str) -> str:
    """Why `extract_code` found no env in a reply, as feedback a repair prompt can act on."""
    blocks = _code_blocks(reply)
    if not blocks:
        return "no_code: the reply holds no ```python code block"
    code = blocks[-1]
    try:
        ast.parse(code)
    except SyntaxError as exc:
        cut = (
            " (the code block is unclosed: the reply was cut off)" if reply.count("```") % 2 else ""
        )
        return f"syntax_error: line {exc.lineno}: {exc.msg}{cut}"
    except ValueError as exc:
        return f"syntax_error: {exc}"
    return "no_env_class: the code defines no class whose name ends in 'Env'"


def failure_text(report: ValidationReport) -> str:
    """What a repair prompt is told of an env the validator rejected: the first failed check
    and why (`code_problem` says it of a reply with no env to validate)."""
    first = report.failed()[0]
    return f"{first.name}: {first.detail}"


def defines_env_class(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(n, ast.ClassDef) and n.name.endswith("Env") for n in tree.body)
