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


TEXT = ("game", "reasoning")
MECHANICS: tuple[Mechanic, ...] = (
    Mechanic("number_search", TEXT, ("search", "deduction"), number_search.build,
             number_search.HINTS, lambda content: True, number_search.build_kit),
    Mechanic("lock_code", TEXT, ("deduction", "search"), lock_code.build, lock_code.HINTS,
             _has_items(6), lock_code.build_kit),
    Mechanic("word_deduce", TEXT, ("deduction", "information gathering"), word_deduce.build,
             word_deduce.HINTS, word_deduce.fits, word_deduce.build_kit),
    Mechanic("cloze", ("reasoning",), ("deduction", "information gathering"), cloze.build,
             cloze.HINTS, cloze.fits, cloze.build_kit),
    Mechanic("pair_match", ("game",), ("information gathering", "search"), pair_match.build,
             pair_match.HINTS, _has_items(7), pair_match.build_kit),
    Mechanic("ordering", TEXT, ("planning", "algorithm execution"), ordering.build,
             ordering.HINTS, ordering.fits, ordering.build_kit),
    Mechanic("accumulate", TEXT, ("arithmetic", "planning"), accumulate.build,
             accumulate.HINTS, accumulate.fits, accumulate.build_kit),
    Mechanic("arith_chain", ("reasoning",), ("arithmetic", "algorithm execution"),
             arith_chain.build, arith_chain.HINTS, lambda content: True, arith_chain.build_kit),
    Mechanic("grid_walk", ("game",), ("search", "planning", "information gathering"),
             grid_walk.build, grid_walk.HINTS, _has_items(1), grid_walk.build_kit),
    Mechanic("tool_records", ("tool_use",), ("information gathering", "search", "arithmetic"),
             tool_records.build, tool_records.HINTS, _has_items(6)),
    Mechanic("tool_probe", ("tool_use",), ("search", "deduction"), tool_probe.build,
             tool_probe.HINTS, lambda content: True),
    Mechanic("tool_switches", ("tool_use",), ("planning", "algorithm execution"),
             tool_switches.build, tool_switches.HINTS, _has_items(5)),
)  # fmt: skip

__all__ = ["MECHANICS", "Mechanic", "Target"]
