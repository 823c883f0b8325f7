"""Env mechanics the warm start teaches, each a generator of short grounded env sources.

A mechanic is a way an env hides state and reveals it to a player who acts (binary search,
letter feedback, swaps with positional feedback, ...). Each generator varies the code's
structure (state layout, parsing, reward shaping, wording) so that two of its envs are
rarely near-duplicates, and fills it with items from the document.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from spade.selfplay.warmup.content import Content
from spade.selfplay.warmup.mechanics import (
    accumulate,
    arith_chain,
    cloze,
    grid_walk,
    lock_code,
    number_search,
    ordering,
    pair_match,
    tool_probe,
    tool_records,
    tool_switches,
    word_deduce,
)
from spade.selfplay.warmup.mechanics._parts import Target


def _fits_any(content: Content) -> bool:
    return True


def _has_items(count: int) -> Callable[[Content], bool]:
    return lambda content: len(content.items(count)) >= count


@dataclass(frozen=True)
class Mechanic:
    name: str
    kinds: tuple[str, ...]
    skills: tuple[str, ...]
    build: Callable[[random.Random, Content, Target], str]
    """A complete env source for a target, grounded in the content."""
    hints: tuple[str, ...]
    """Strategy hints phrased for every seed (the first that passes the leak check is used)."""
    fits: Callable[[Content], bool]
    """Whether a document offers what the mechanic needs."""
    build_kit: Callable[[random.Random, Content, Target], str] | None = None
    """The same mechanic's design on the text-env scaffold (`spade.envs.scaffold`): only the
    `TextScaffold` subclass; None for a mechanic that does not fit the scaffold (tool use)."""


def _mechanic(
    module: ModuleType,
    kinds: tuple[str, ...],
    skills: tuple[str, ...],
    fits: Callable[[Content], bool],
) -> Mechanic:
    """The mechanic a module defines: its `build`, `HINTS` and `build_kit` if it has one."""
    name = module.__name__.rpartition(".")[2]
    kit = getattr(module, "build_kit", None)
    return Mechanic(name, kinds, skills, module.build, module.HINTS, fits, kit)


TEXT = ("game", "reasoning")
TOOL = ("tool_use",)
MECHANICS: tuple[Mechanic, ...] = (
    _mechanic(number_search, TEXT, ("search", "deduction"), _fits_any),
    _mechanic(lock_code, TEXT, ("deduction", "search"), _has_items(6)),
    _mechanic(word_deduce, TEXT, ("deduction", "information gathering"), word_deduce.fits),
    _mechanic(cloze, ("reasoning",), ("deduction", "information gathering"), cloze.fits),
    _mechanic(pair_match, ("game",), ("information gathering", "search"), _has_items(7)),
    _mechanic(ordering, TEXT, ("planning", "algorithm execution"), ordering.fits),
    _mechanic(accumulate, TEXT, ("arithmetic", "planning"), accumulate.fits),
    _mechanic(arith_chain, ("reasoning",), ("arithmetic", "algorithm execution"), _fits_any),
    _mechanic(grid_walk, ("game",), ("search", "planning", "information gathering"), _has_items(1)),
    _mechanic(tool_records, TOOL, ("information gathering", "search", "arithmetic"), _has_items(6)),
    _mechanic(tool_probe, TOOL, ("search", "deduction"), _fits_any),
    _mechanic(tool_switches, TOOL, ("planning", "algorithm execution"), _has_items(5)),
)

__all__ = ["MECHANICS", "Mechanic", "Target"]
