"""The `reasoning_gym` runner: rg_math, rg_algorithmic, rg_cognition, rg_logic.

Each sample is one seeded Reasoning-Gym item (`TASK/INDEX`, see `rg_tasks`). The prompt is
Reasoning-Gym's own evaluation setup: its system prompt (`SYSTEM_PROMPTS["default"]`, which
asks for `<answer>...</answer>`) and the item's question as the user turn. The answer is
`reasoning_gym.utils.extract_answer` (the last answer tags' content) and the score is the
task's own `score_answer(answer, entry)`, so partial credit is whatever the task gives.
Primary `score` is the mean over the category's items; `score[task=T]` breaks it down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spade.evals.declarations import Declaration
from spade.evals.rg_tasks import RgItem, RgTasks, parse_rg_options, require_version
from spade.evals.samples import ProgressCallback, SampleResult
from spade.rollout import GenRequest, Responder

_ERROR_CHARS = 300


def extract_rg_answer(output: str) -> str | None:
    from reasoning_gym.utils import extract_answer

    answer: str | None = extract_answer(output)
    return answer


class ReasoningGymBenchmark:
    """A declared Reasoning-Gym category (`runner: reasoning_gym`)."""

    def __init__(self, declaration: Declaration) -> None:
        self.declaration = declaration
        self.options = parse_rg_options(declaration)
        self.tasks = RgTasks(self.options)

    def sample_ids(self, data_dir: Path | None) -> list[str]:
        return self.tasks.sample_ids()

    def run(
        self,
        ids: list[str],
        respond: Responder,
        data_dir: Path | None,
        progress: ProgressCallback | None = None,
    ) -> list[SampleResult]:
        require_version(self.declaration, self.options.reasoning_gym_version)
        items = [self.tasks.item(sample_id) for sample_id in ids]
        system = self.tasks.system_prompt()
        generation = self.declaration.generation
        sampling = generation.sampling(self.options.seed)
        name = self.declaration.name
        requests = [
            GenRequest(name, item.sample_id, self.messages(system, item), sampling, n=generation.n)
            for item in items
        ]
        outputs = [[c.text for c in reply] for reply in respond(requests)]
        results = [
            self._score(item, request, texts)
            for item, request, texts in zip(items, requests, outputs, strict=True)
        ]
        if progress is not None:
            progress(len(results))
        return results

    @staticmethod
    def messages(system: str, item: RgItem) -> tuple[dict[str, Any], ...]:
        return ({"role": "system", "content": system}, {"role": "user", "content": item.question})

    def _score(self, item: RgItem, request: GenRequest, texts: list[str]) -> SampleResult:
        scores: list[float] = []
        answers: list[str | None] = []
        errors: list[str] = []
        for text in texts:
            answer = extract_rg_answer(text)
            answers.append(answer)
            try:
                scores.append(float(item.score_answer(answer, item.entry)))
            except Exception as exc:  # a task's scorer choking on a malformed answer scores 0
                scores.append(0.0)
                errors.append(f"{type(exc).__name__}: {exc}"[:_ERROR_CHARS])
        score = sum(scores) / len(scores) if scores else 0.0
        single = len(texts) == 1
        metrics = {
            "solved": sum(s >= 1.0 for s in scores) / max(len(scores), 1),
            f"score[task={item.task}]": score,
        }
        extra: dict[str, Any] = {
            "task": item.task,
            "index": item.index,
            "level": self.tasks.level(item.task),
        }
        if errors:
            extra["scorer_errors"] = errors
        if not single:
            extra["scores"] = scores
        return SampleResult(
            benchmark=self.declaration.name,
            sample_id=item.sample_id,
            prompt=list(request.messages),
            output=texts[0] if single else texts,
            answer=answers[0] if single else answers,
            target=item.entry.get("answer"),
            score=score,
            metrics=metrics,
            parsed=all(a is not None for a in answers) and bool(answers),
            extra=extra,
        )
