"""The benchmark protocol and the registry from a declaration's `runner` to its code."""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Protocol

from spade.evals.declarations import Declaration, DeclarationError
from spade.evals.samples import ProgressCallback, SampleResult
from spade.rollout import Responder


class Benchmark(Protocol):
    """One declared benchmark, ready to run.

    `sample_ids` lists the test split's ids in dataset order (the contract's SAMPLE_IDs:
    the dataset's own ids where it has them, else the 0-based row index as a string).
    `run` prompts the responder for the given ids and scores every answer; it never raises
    for a bad model output (that is a score of 0 and, where relevant, a parse failure).
    """

    declaration: Declaration

    def sample_ids(self, data_dir: Path | None) -> list[str]: ...

    def run(
        self,
        ids: list[str],
        respond: Responder,
        data_dir: Path | None,
        progress: ProgressCallback | None = None,
    ) -> list[SampleResult]: ...


def check_known_ids(name: str, ids: Iterable[str], known: Collection[str], more: str = "") -> None:
    """Raise a one-line ValueError naming the ids `known` lacks, with an example of its ids
    (and `more`, e.g. the categories, inside the same parenthesis)."""
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise ValueError(
            f"{name}: unknown sample ids {unknown[:5]} (ids look like {next(iter(known), '?')!r}"
            f"{more})"
        )


# runner name -> "module:factory"; factories take the declaration.
RUNNERS: dict[str, str] = {
    "lm_eval": "spade.evals.lm_eval_runner:LmEvalBenchmark",
    "code": "spade.evals.code_runner:CodeBenchmark",
    "bfcl": "spade.evals.bfcl.runner:BfclBenchmark",
    "suite": "spade.evals.suite_runner:SuiteBenchmark",
    "acebench": "spade.evals.acebench:AceBenchBenchmark",
    "reasoning_gym": "spade.evals.rg_runner:ReasoningGymBenchmark",
    "games": "spade.evals.games_runner:GamesBenchmark",
    "ladder": "spade.evals.ladder_runner:LadderBenchmark",
}


def build_benchmark(declaration: Declaration) -> Benchmark:
    target = RUNNERS.get(declaration.runner)
    if target is None:
        raise DeclarationError(
            f"{declaration.name}: runner {declaration.runner!r} is not available in this version"
        )
    module_name, _, attribute = target.partition(":")
    factory: Callable[[Declaration], Benchmark] = getattr(
        importlib.import_module(module_name), attribute
    )
    return factory(declaration)


def seeded_slice(ids: list[str], size: int | None, seed: int, stratify: bool = False) -> list[str]:
    """A fixed subset of `size` ids (all when None), kept in dataset order.

    `stratify` spreads the subset evenly over the groups that ids name before their last
    `/` (BBH subtasks, BFCL categories), so a small slice still covers every group."""
    if size is None or size >= len(ids):
        return list(ids)
    rng = random.Random(seed)
    if not stratify:
        chosen = set(rng.sample(range(len(ids)), size))
    else:
        groups: dict[str, list[int]] = {}
        for index, sample_id in enumerate(ids):
            groups.setdefault(sample_id.rpartition("/")[0], []).append(index)
        queues = [rng.sample(members, len(members)) for members in groups.values()]
        chosen = set()
        while len(chosen) < size:
            for queue in queues:
                if queue and len(chosen) < size:
                    chosen.add(queue.pop())
    return [sample_id for index, sample_id in enumerate(ids) if index in chosen]
