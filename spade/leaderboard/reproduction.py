"""The gate's reproduction check: did a greedy re-run of the same model give the same samples?

Greedy decoding of the same weights, on the same backend, dtype and device, with the same
generation settings and batches, gives the same tokens run after run on one machine (measured
on the CI preset, on transformers and on vLLM: docs/evaluation.md), so every sample's output,
extracted answer and score should come back exactly. Any sample where one of them changed is
listed, and more than `MAX_CHANGED_SAMPLES` of them on a benchmark (or the stored row's
`settings.max_changed_samples[NAME]`) fail it, whatever they do to the mean.

What it catches that no statistical test on a small slice can: one changed answer on any
benchmark, a zero-scoring one included (a chat template, prompt, stop sequence or decoding
change moves outputs even where every score stays 0; an answer extractor change moves the
extracted answers), and a scorer change that moves a score without moving the output. What it
cannot: a change on samples outside the slice, a change that leaves output, answer and score
as they were (say, an unused metric), and anything when the identity differs (other weights,
backend, dtype or device, sampled decoding, rows without digests): then it says why it did not
run and only the statistical drop check applies.
"""

from __future__ import annotations

from dataclasses import dataclass

from spade.leaderboard.row import Row

MAX_CHANGED_SAMPLES = 1
"""Changed samples a benchmark may have by default. Two greedy runs on one machine change
none; one is allowed because another CPU (other SIMD kernels, another thread count) sums in
another order, and a near-tie between two tokens can then flip one generation. Two changed
samples on one benchmark are a change of the code."""
IDENTITY = ("weights_sha256", "backend", "dtype", "device")
"""The checkpoint fields that must match for a greedy run to reproduce exactly."""
_SCORE_SLACK = 1e-9


@dataclass(frozen=True)
class ChangedSample:
    """A sample of the stored row that did not come back as it was."""

    sample_id: str
    stored_score: float
    current_score: float
    output_changed: bool
    answer_changed: bool | None
    """None when either side kept no answer digests."""

    @property
    def score_changed(self) -> bool:
        return abs(self.current_score - self.stored_score) > _SCORE_SLACK

    def describe(self) -> str:
        score = (
            f"score {self.stored_score:g} → {self.current_score:g}"
            if self.score_changed
            else f"score {self.current_score:g} unchanged"
        )
        parts = [score, "output changed" if self.output_changed else "same output"]
        if self.answer_changed is not None:
            parts.append("answer changed" if self.answer_changed else "same answer")
        return f"{self.sample_id}: {', '.join(parts)}"


@dataclass(frozen=True)
class Reproduction:
    """The reproduction check on one benchmark; `checked` is False when it could not apply."""

    checked: bool
    compared: int
    changed: tuple[ChangedSample, ...]
    limit: int
    note: str
    """What was compared (when checked), or why nothing was."""
    missing: tuple[str, ...] = ()
    """Samples of the stored row this run lacks although it ran the same slice (same preset
    and limit): a sample a runner silently drops is a changed sample too."""

    @property
    def count(self) -> int:
        """Changed and missing samples: what the limit applies to."""
        return len(self.changed) + len(self.missing)

    @property
    def failed(self) -> bool:
        return self.checked and self.count > self.limit

    def lines(self) -> list[str]:
        """A summary line, then one line per changed or missing sample (all of them)."""
        if not self.checked:
            return [f"  reproduction not checked: {self.note}"]
        if not self.count:
            return [f"  reproduction ok: all {self.compared} samples reproduced ({self.note})"]
        verdict = "FAILED" if self.failed else "ok"
        total = self.compared + len(self.missing)
        head = (
            f"  reproduction {verdict}: {self.count} of {total} samples changed, "
            f"{'more than' if self.failed else 'within'} the {self.limit} allowed ({self.note})"
        )
        changed = [f"    {sample.describe()}" for sample in self.changed]
        return [head, *changed, *(f"    {i}: missing from this run" for i in self.missing)]


def reproduce(stored: Row, current: Row, name: str, limit: int) -> Reproduction:
    """Compare `name`'s samples of `current` with `stored`'s one by one, when a reproduction
    is expected (same identity, greedy, same generation settings, digests on both sides)."""
    why_not = _why_not_comparable(stored, current, name)
    if why_not is not None:
        return Reproduction(False, 0, (), limit, why_not)
    old_scores, new_scores = stored.samples[name], current.samples[name]
    old_outputs, new_outputs = stored.outputs[name], current.outputs[name]
    ids = [i for i in old_scores if i in new_scores and i in old_outputs and i in new_outputs]
    if not ids:
        return Reproduction(False, 0, (), limit, "no sample of the stored row in this run")
    old_answers, new_answers = stored.answers.get(name), current.answers.get(name)
    samples = (
        ChangedSample(
            sample_id,
            old_scores[sample_id],
            new_scores[sample_id],
            old_outputs[sample_id] != new_outputs[sample_id],
            _answer_changed(old_answers, new_answers, sample_id),
        )
        for sample_id in ids
    )
    changed = tuple(s for s in samples if s.output_changed or s.answer_changed or s.score_changed)
    missing = (
        tuple(i for i in old_scores if i not in new_scores) if _same_slice(stored, current) else ()
    )
    return Reproduction(True, len(ids), changed, limit, _identity(current), missing)


def _same_slice(stored: Row, current: Row) -> bool:
    # A --limit run, or another preset, legitimately covers other samples.
    return all(stored.settings.get(key) == current.settings.get(key) for key in ("preset", "limit"))


def _answer_changed(
    old: dict[str, str] | None, new: dict[str, str] | None, sample_id: str
) -> bool | None:
    if old is None or new is None or sample_id not in old or sample_id not in new:
        return None
    return old[sample_id] != new[sample_id]


def _identity(row: Row) -> str:
    checkpoint = row.checkpoint
    return (
        f"weights {str(checkpoint['weights_sha256'])[:12]}, {checkpoint.get('backend')}, "
        f"{checkpoint.get('dtype')}, greedy"
    )


def _why_not_comparable(stored: Row, current: Row, name: str) -> str | None:
    old, new = stored.checkpoint, current.checkpoint
    if not old.get("weights_sha256") or not new.get("weights_sha256"):
        return "no weights hash on both sides"
    for key in IDENTITY:
        if key in old and key in new and old[key] != new[key]:
            return f"{key} differs ({old[key]} → {new[key]}): outputs may change legitimately"
    before, after = stored.benchmarks[name], current.benchmarks[name]
    if not (before.greedy and after.greedy):
        return "not greedy on both sides (temperature 0 not recorded)"
    if before.generation != after.generation:
        return "generation settings changed"
    if name not in stored.outputs or name not in current.outputs:
        side = "stored row" if name not in stored.outputs else "this run"
        return f"the {side} kept no output digests"
    if name not in stored.samples or name not in current.samples:
        return "no per-sample scores on both sides"
    return None
