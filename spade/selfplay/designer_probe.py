"""How often a checkpoint's designer writes valid, new environments, measured the loop's way.

A warm start is judged by what the run will see: the designer's prompts as `design_requests`
builds them (corpus documents, targets, cold-start references from an empty memory), its
sampling, the sandbox checks with repairs, the near-duplicate guard against the warm-start
data (`designer.known_designs`: a memorised training env is not a design) and the hint step.
Nothing is played and nothing is updated, so a probe costs generation and validation only.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from spade.atomic import write_atomic
from spade.corpus import Corpus
from spade.rollout import Responder
from spade.sandbox import SandboxConfig
from spade.selfplay.config import TrainConfig
from spade.selfplay.design_step import (
    Candidate,
    DesignTimes,
    design_requests,
    generate_candidates,
    write_hints,
)
from spade.selfplay.memory import ColdStartEnv, EnvMemory


@dataclass(frozen=True)
class ProbeResult:
    candidates: list[Candidate]
    seconds: dict[str, float]

    @property
    def valid(self) -> int:
        return sum(c.valid for c in self.candidates)

    @property
    def validity(self) -> float:
        return self.valid / len(self.candidates) if self.candidates else 0.0

    def failures(self) -> Counter[str]:
        """Failed candidates by the check that failed first (`syntax`, `near_duplicate`...)."""
        return Counter(failure_kind(c.failure) for c in self.candidates if not c.valid)

    def first_failures(self) -> Counter[str]:
        """The same for the designer's first replies, before any repair: the designs a repair
        prompt (never in a warm start's data) did not write."""
        return Counter(
            failure_kind(c.first[1] if c.first else c.failure)
            for c in self.candidates
            if c.first or not c.valid
        )

    def cut_off(self) -> int:
        """Candidates whose last reply hit the designer's token limit."""
        return sum(c.completion.finish_reason == "length" for c in self.candidates)

    def summary(self) -> dict[str, Any]:
        return {
            "candidates": len(self.candidates),
            "valid": self.valid,
            "validity": round(self.validity, 4),
            "failures": dict(self.failures().most_common()),
            "first_failures": dict(self.first_failures().most_common()),
            "cut_off": self.cut_off(),
            "repaired": sum(c.valid and c.attempts > 1 for c in self.candidates),
            "seconds": {k: round(v, 1) for k, v in self.seconds.items()},
        }


def failure_kind(failure: str | None) -> str:
    """The leading name of a candidate's failure (`syntax: line 3 ...` -> `syntax`)."""
    if failure is None:
        return "unknown"
    return failure.split(":", 1)[0].strip() or "unknown"


def probe_designer(
    config: TrainConfig,
    respond: Responder,
    corpus: Corpus | None,
    cold_start: Sequence[ColdStartEnv],
    known: Sequence[tuple[str, str]],
    sandbox: SandboxConfig,
    rounds: int,
    progress: bool = False,
    after_round: Callable[[ProbeResult], object] | None = None,
) -> ProbeResult:
    """`rounds` batches of the loop's design requests (each `designs_per_iteration` prompts of
    `group_size` samples), seeded from `config.seed` apart from any training iteration.
    `after_round` gets the result so far after each round (a probe of a slow designer runs for
    an hour: what it measured survives a stop)."""
    memory = EnvMemory(config.memory.capacity)  # empty, as at a run's first iteration
    candidates: list[Candidate] = []
    times = DesignTimes()
    started = time.perf_counter()
    bar = tqdm(range(rounds), desc="designer probe", unit="round", disable=not progress)
    for index in bar:
        rng = random.Random(f"{config.seed}/probe/{index}")
        requests = design_requests(config, rng, corpus, memory, cold_start)
        batch = generate_candidates(
            requests, respond, config, rng.randrange(1 << 30), sandbox, memory, times, known
        )
        write_hints(batch, respond, config, rng.randrange(1 << 30), sandbox, times)
        candidates += batch
        bar.set_postfix(valid=f"{sum(c.valid for c in candidates)}/{len(candidates)}")
        if after_round is not None:
            after_round(ProbeResult(list(candidates), _seconds(started, times)))
    return ProbeResult(candidates, _seconds(started, times))


def _seconds(started: float, times: DesignTimes) -> dict[str, float]:
    return {
        "total": time.perf_counter() - started,
        "generation": times.generation,
        "validation": times.validation,
    }


def write_designs(path: Path, result: ProbeResult) -> Path:
    """Every candidate (reply, verdict, hint) as JSON lines, written atomically."""
    lines = []
    for c in result.candidates:
        record = {
            "group": c.group,
            "valid": c.valid,
            "failure": c.failure,
            "attempts": c.attempts,
            "finish_reason": c.completion.finish_reason,
            "kind": c.request.kind,
            "skill": c.request.skill,
            "document_id": c.request.document_id,
            "reply": c.reply,
            "hint": c.hint,
            "first_reply": c.first[0] if c.first else None,
            "first_failure": c.first[1] if c.first else None,
        }
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    write_atomic(path, "".join(lines))
    return path
