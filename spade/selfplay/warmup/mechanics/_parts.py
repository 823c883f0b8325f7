"""Pieces several mechanics share: filling a source template, literals, command parsers.

Templates are `string.Template`s (`$name` slots): generated env code is full of braces, so
`str.format` would need every one doubled, and generated code never uses `$`.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from string import Template
from typing import TypeVar

from spade.selfplay.warmup.content import Content

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """What the designer prompt asks for; the env's `metadata` says the same."""

    kind: str
    skill: str
    difficulty: str

    def metadata(self) -> str:
        return json.dumps({"kind": self.kind, "skill": self.skill, "difficulty": self.difficulty})

    def pick(self, easy: T, medium: T, hard: T) -> T:
        """The value for this target's difficulty (an unknown difficulty counts as medium)."""
        return {"easy": easy, "hard": hard}.get(self.difficulty, medium)


def fill(template: str, **values: object) -> str:
    """A whole source: `block` of the template, trailing spaces and runs of blank lines
    squeezed, one final newline."""
    text = block(template, **values)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{4,}", "\n\n\n", text)
    return text.strip() + "\n"


def block(template: str, **values: object) -> str:
    """A piece of code with its slots filled, also slots inside the values (a few levels);
    indentation kept, no trailing newline."""
    mapping = {key: str(value) for key, value in values.items()}
    text = template
    for _ in range(4):
        text, before = Template(text).safe_substitute(mapping), text
        if text == before:
            break
    left = re.search(r"\$\w+", text)
    if left:
        raise KeyError(f"template slot {left.group()} has no value")
    return text.rstrip("\n")


def literal(value: object) -> str:
    """A Python literal for strings, numbers and lists of them (JSON's syntax is Python's)."""
    return json.dumps(value)


def class_name(content: Content, noun: str) -> str:
    return f"{content.label()}{noun}Env"


def docstring(rng: random.Random, *options: str) -> str:
    """A one-line module docstring (or, twice as often, none: it costs tokens), with its blank
    line."""
    choice = rng.choice([*options, *[""] * (2 * len(options))])
    return f'"""{choice}"""\n\n' if choice else ""


def say(rng: random.Random, *options: str) -> str:
    """One wording of a message (the same thing said differently keeps sources apart)."""
    return rng.choice(options)


@dataclass(frozen=True)
class Reader:
    """How a text env reads the command in `\\boxed{...}` out of an action."""

    lines: str
    """Method-body code (8-space indent) that sets `text` to the stripped command, '' when
    the action holds none."""
    imports_re: bool


_READERS = (
    Reader(
        r"""        text = (re.findall(r"\\boxed\{(.*?)\}", action) or [""])[-1].strip()""", True
    ),
    Reader(r"""        text = action.split("\\boxed{")[-1].split("}")[0].strip()""", False),
    Reader(
        r'''        match = re.search(r"\\boxed\{([^{}]*)\}", action)
        text = match.group(1).strip() if match else ""''',
        True,
    ),
)


def reader(rng: random.Random) -> Reader:
    # The split reader needs no `re` import: the shortest, so the most common.
    return rng.choices(_READERS, weights=[1, 2, 1])[0]


def imports(*modules: str) -> str:
    return "".join(f"import {name}\n" for name in sorted(set(modules)))


def read_slots(rng: random.Random) -> dict[str, object]:
    """The slots of a plain text env's command reading: `read`, a drawn reader's lines, and
    `imports`, `random` and the `re` that reader may need."""
    read = reader(rng)
    return {"read": read.lines, "imports": imports("random", *(["re"] if read.imports_re else []))}
