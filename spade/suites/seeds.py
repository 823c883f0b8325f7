"""Evaluation seeds of a frozen env: fixed, documented, and disjoint from the check seeds.

Seed i of env `ID` in suite `NAME` is `1000 + int(sha256(f"{NAME}\\n{ID}\\n{i}")[:8 hex]) %
(2**31 - 1000)`, skipping repeats. `spade-suite check` plays seeds 0, 1, 2, ...; eval seeds
start at 1000, so an env cannot have been tuned on the seeds it is scored on, and anyone can
recompute them from the manifest alone.

Training plays draw their seeds with `training_seeds`, which never returns one of the env's
eval seeds: an env is never scored on a seed it was trained on.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Collection

DEFAULT_EVAL_SEEDS = 10
SEED_FLOOR = 1000
_SPAN = 2**31 - SEED_FLOOR  # stays a non-negative int32 for tools that need one
TRAINING_SEED_SPAN = 1 << 30
"""Training seeds are drawn uniformly from [0, TRAINING_SEED_SPAN)."""


def eval_seeds(suite: str, env_id: str, count: int = DEFAULT_EVAL_SEEDS) -> list[int]:
    seeds: list[int] = []
    index = 0
    while len(seeds) < count:
        digest = hashlib.sha256(f"{suite}\n{env_id}\n{index}".encode()).hexdigest()
        seed = SEED_FLOOR + int(digest[:8], 16) % _SPAN
        if seed not in seeds:
            seeds.append(seed)
        index += 1
    return seeds


def training_seeds(rng: random.Random, count: int, avoid: Collection[int] = ()) -> list[int]:
    """`count` seeds for training plays, one `rng.randrange(TRAINING_SEED_SPAN)` each, drawn
    again whenever it is in `avoid` (the env's eval seeds). Without a clash the draws are those
    of plain `randrange` calls, so runs seeded before this exclusion existed replay the same."""
    seeds: list[int] = []
    while len(seeds) < count:
        seed = rng.randrange(TRAINING_SEED_SPAN)
        if seed not in avoid:
            seeds.append(seed)
    return seeds
