"""The parsed answer of an lm-eval sample, and whether anything could be parsed.

For tasks with filters (gsm8k, bbh, mmlu) the primary filter's output is the answer, and
lm-eval's fallback value (`[invalid]`) means nothing was extracted. Tasks that extract
inside `process_results` (minerva math, aime) log no answer, so we repeat their extraction
with lm-eval's (or math_verify's) own functions: the score stays lm-eval's either way.
"""

from __future__ import annotations

from collections.abc import Sequence

from spade.evals.lm_eval_tasks import AnswerReading


def read_answer(
    reading: AnswerReading, output: str, filtered: object, invalid: Sequence[str]
) -> str | None:
    """The answer extracted from `output`, or None when nothing could be extracted."""
    if reading == "minerva":
        return _minerva(output)
    if reading == "math_verify":
        return _math_verify(output)
    if reading == "aime":
        return _aime(output)
    if not isinstance(filtered, str) or not filtered.strip() or filtered in invalid:
        return None
    return filtered


def _minerva(output: str) -> str | None:
    from lm_eval.tasks.minerva_math import utils

    raw = utils.get_unnormalized_answer(output)
    return None if raw == "[invalidanswer]" else utils.normalize_final_answer(raw)


def _math_verify(output: str) -> str | None:
    from math_verify import parse

    # minerva_math's process_results scores `verify(parse(solution), parse(output))`; an
    # empty parse of the output can never verify.
    parsed = parse(output)
    return str(parsed[-1]) if parsed else None


def _aime(output: str) -> str | None:
    from lm_eval.tasks.aime import utils

    # lm-eval's aime process_results: the last \boxed{...} if any, else the text between
    # the first and last `$`; failing both it compares the whole output (rarely a match).
    boxed = utils.last_boxed_only_string(output)
    if boxed is not None:
        try:
            return str(utils.remove_boxed(boxed))
        except (AssertionError, IndexError):
            pass
    dollars = [i for i, char in enumerate(output) if char == "$"]
    return output[dollars[0] + 1 : dollars[-1]] if len(dollars) > 1 else None
