"""The `code` runner: HumanEval and MBPP, scored by running programs in the sandbox.

Each answer's code is extracted (`code_extract`), wrapped with the problem's tests
(`code_problems`) and run in a forked child of a sandbox worker (`spade.sandbox.programs`),
never on the host and never through `evaluate`'s code_eval. A sample's score is pass@1
(the fraction of its n answers that pass); pass@k for every k ≤ n uses the unbiased
estimator.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from spade.evals.benchmark import check_known_ids
from spade.evals.code_metrics import pass_at_k_metrics
from spade.evals.code_problems import LOADERS, CodeProblem, humaneval_problem, mbpp_problems
from spade.evals.declarations import Declaration, DeclarationError
from spade.evals.samples import ProgressCallback, SampleResult
from spade.rollout import GenRequest, Responder
from spade.sandbox import default_config
from spade.sandbox.programs import ProgramResult, run_programs

_DETAIL_CHARS = 500


class CodeOptions(BaseModel):
    """The `options:` of a `runner: code` declaration."""

    model_config = ConfigDict(extra="forbid")

    dataset: Literal["humaneval", "mbpp"] = Field(description="which problem format to load")
    timeout_s: float = Field(10.0, gt=0, description="wall-clock limit of one test program")
    parallelism: int | None = Field(None, ge=1, description="sandbox workers (default: cores)")
    num_fewshot: int = Field(0, ge=0, le=3, description="MBPP prompt examples (tasks 2-4)")
    memory_mb: int = Field(1024, ge=64, description="address-space limit of each program")


class CodeBenchmark:
    """A declared code benchmark (`runner: code`)."""

    def __init__(self, declaration: Declaration) -> None:
        self.declaration = declaration
        self.options = declaration.typed_options(CodeOptions)
        self._problems: dict[Path | None, dict[str, CodeProblem]] = {}

    # -- data ------------------------------------------------------------------------------
    def problems(self, data_dir: Path | None) -> dict[str, CodeProblem]:
        """The test split's problems by SAMPLE_ID, in dataset order (loaded once)."""
        if data_dir not in self._problems:
            loaded = self._load_files(data_dir) if data_dir is not None else self._load_hub()
            self._problems[data_dir] = {p.sample_id: p for p in loaded}
        return self._problems[data_dir]

    def _load_files(self, data_dir: Path) -> list[CodeProblem]:
        if not self.declaration.data:
            raise DeclarationError(f"{self.declaration.name}: declares no data files")
        self.declaration.verify_data(data_dir)
        path = data_dir / self.declaration.data[0].path
        return LOADERS[self.options.dataset](path, self.options.num_fewshot)

    def _load_hub(self) -> list[CodeProblem]:
        hub = self.declaration.hub
        if hub is None:
            raise DeclarationError(f"{self.declaration.name}: no hub source; pass --data-dir")
        try:
            import datasets  # optional: only the hub path needs it
        except ImportError:
            raise DeclarationError(
                f"{self.declaration.name}: loading {hub.path} from the Hugging Face hub needs "
                "the `datasets` package; install it, or pass --data-dir with the files "
                f"{', '.join(d.path for d in self.declaration.data)}"
            ) from None
        rows: list[dict[str, Any]] = list(
            datasets.load_dataset(hub.path, hub.name, split=hub.split)
        )
        if self.options.dataset == "humaneval":
            return [humaneval_problem(row) for row in rows]
        # The few-shot examples live in the sanitized config's `prompt` split.
        shots = list(datasets.load_dataset(hub.path, hub.name, split="prompt"))
        return mbpp_problems(shots + rows, self.options.num_fewshot)

    def sample_ids(self, data_dir: Path | None) -> list[str]:
        return list(self.problems(data_dir))

    # -- run -------------------------------------------------------------------------------
    def run(
        self,
        ids: list[str],
        respond: Responder,
        data_dir: Path | None,
        progress: ProgressCallback | None = None,
    ) -> list[SampleResult]:
        ids = list(dict.fromkeys(ids))  # one result per sample, as the other runners
        problems = self.problems(data_dir)
        check_known_ids(self.declaration.name, ids, problems)
        generation = self.declaration.generation
        sampling = generation.sampling()
        chosen = [problems[i] for i in ids]
        requests = [
            GenRequest(self.declaration.name, p.sample_id, p.messages, sampling, n=generation.n)
            for p in chosen
        ]
        outputs = [[c.text for c in reply] for reply in respond(requests)]
        solutions = [
            [p.solution(text) for text in texts] for p, texts in zip(chosen, outputs, strict=True)
        ]
        results = self._run_programs(chosen, solutions, progress)
        return [
            self._score(p, texts, sols, res)
            for p, texts, sols, res in zip(chosen, outputs, solutions, results, strict=True)
        ]

    def _run_programs(
        self,
        problems: list[CodeProblem],
        solutions: list[list[str | None]],
        progress: ProgressCallback | None,
    ) -> list[list[ProgramResult | None]]:
        """Every extracted solution's program, run in one pooled batch; None where nothing
        was extracted (that is a failure without a run)."""
        programs: list[str] = []
        where: list[tuple[int, int]] = []
        for i, (problem, sols) in enumerate(zip(problems, solutions, strict=True)):
            for j, solution in enumerate(sols):
                if solution is not None:
                    programs.append(problem.program(solution))
                    where.append((i, j))
        # Progress counts samples: one tick when a sample's last program has finished.
        remaining = [sum(s is not None for s in sols) for sols in solutions]
        unparsed = sum(count == 0 for count in remaining)
        if progress is not None and unparsed:
            progress(unparsed)
        lock = threading.Lock()

        def finished(index: int) -> None:  # called from the pool's threads
            sample = where[index][0]
            with lock:
                remaining[sample] -= 1
                if remaining[sample] == 0 and progress is not None:
                    progress(1)

        config = replace(default_config(), memory_mb=self.options.memory_mb)  # configured backend
        ran = run_programs(
            programs, self.options.timeout_s, config, self.options.parallelism, finished
        )
        results: list[list[ProgramResult | None]] = [[None] * len(s) for s in solutions]
        for (i, j), result in zip(where, ran, strict=True):
            results[i][j] = result
        return results

    def _score(
        self,
        problem: CodeProblem,
        texts: list[str],
        solutions: list[str | None],
        results: list[ProgramResult | None],
    ) -> SampleResult:
        n = len(texts)
        passed = sum(r is not None and r.passed for r in results)
        metrics = pass_at_k_metrics(n, passed) if n else {"pass@1": 0.0}
        single = n == 1
        return SampleResult(
            benchmark=self.declaration.name,
            sample_id=problem.sample_id,
            prompt=list(problem.messages),
            output=texts[0] if single else texts,
            answer=solutions[0] if single else solutions,
            target=problem.tests,
            score=metrics["pass@1"],
            metrics=metrics,
            parsed=n > 0 and all(s is not None for s in solutions),
            extra={
                "status": [r.status if r else "no_code" for r in results],
                "detail": [r.detail[:_DETAIL_CHARS] if r else "" for r in results],
                "seconds": [round(r.seconds, 4) if r else 0.0 for r in results],
            },
        )
