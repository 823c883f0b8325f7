"""Near-duplicate guard: a new env too close to one already in memory is rejected.

A designer rewarded for variance or regret drifts towards copies of its best envs; without a
novelty check the pool collapses. Two tests, cheapest first:
- exact: the same normalised source (comments, docstrings and layout ignored), as freeze uses;
- near: Jaccard similarity of 5-token shingles of the normalised source ≥ a threshold, with
  identifiers canonicalised so that renaming variables or the class does not hide a copy.
On the seed envs, distinct envs score at most ~0.5 and a copy with renamed identifiers,
changed constants and reworded messages ~0.85-0.9, so the default threshold is 0.8.
"""

from __future__ import annotations

import builtins
import functools
import io
import keyword
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass

from spade.envs.scaffold import design_part
from spade.suites.normalise import normalised_source, sha256_hex

DEFAULT_THRESHOLD = 0.8
SHINGLE_SIZE = 5

_KEPT_TOKENS = (tokenize.NAME, tokenize.OP, tokenize.NUMBER, tokenize.STRING)


@dataclass(frozen=True)
class NearDuplicate:
    """Why a source was rejected: the memory env it repeats, and how closely."""

    of: str
    similarity: float
    exact: bool
    """True: same normalised source; False: shingle similarity at or above the threshold."""

    def reason(self) -> str:
        if self.exact:
            return f"duplicate of {self.of} (same code up to comments and layout)"
        return f"near-duplicate of {self.of} (similarity {self.similarity:.2f})"


@dataclass(frozen=True)
class Fingerprint:
    normalised_sha256: str | None
    """None when the source does not parse (then only the shingles compare)."""
    shingles: frozenset[tuple[str, ...]]


@functools.lru_cache(maxsize=1024)  # memory entries are compared again on every new env
def fingerprint(source: str, shingle_size: int = SHINGLE_SIZE) -> Fingerprint:
    """The design's fingerprint: a scaffolded env's prelude, common to all of them, is left
    out (`design_part`)."""
    source = design_part(source)
    try:
        normal = normalised_source(source)
        digest: str | None = sha256_hex(normal.encode("utf-8"))  # = freeze's normalised_sha256
        tokens = _canonical_tokens(normal)
    except (SyntaxError, ValueError):
        digest, tokens = None, _canonical_tokens(source)  # comments and docstrings stay in
    count = max(1, len(tokens) - shingle_size + 1)
    shingles = frozenset(tuple(tokens[i : i + shingle_size]) for i in range(count))
    return Fingerprint(digest, shingles)


def similarity(a: str, b: str, shingle_size: int = SHINGLE_SIZE) -> float:
    """Jaccard similarity |A ∩ B| / |A ∪ B| of the two sources' shingle sets, in [0, 1]."""
    return _jaccard(fingerprint(a, shingle_size).shingles, fingerprint(b, shingle_size).shingles)


def find_near_duplicate(
    source: str,
    pool: Iterable[tuple[str, str]],
    threshold: float = DEFAULT_THRESHOLD,
    shingle_size: int = SHINGLE_SIZE,
) -> NearDuplicate | None:
    """The first env of `pool` ((id, source) pairs, e.g. `EnvMemory.sources()`) that `source`
    repeats exactly, else the most similar one at or above `threshold`, else None."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must lie in (0, 1], not {threshold}")
    new = fingerprint(source, shingle_size)
    best: NearDuplicate | None = None
    for env_id, other_source in pool:
        other = fingerprint(other_source, shingle_size)
        if new.normalised_sha256 is not None and new.normalised_sha256 == other.normalised_sha256:
            return NearDuplicate(env_id, 1.0, exact=True)
        score = _jaccard(new.shingles, other.shingles)
        if score >= threshold and (best is None or score > best.similarity):
            best = NearDuplicate(env_id, score, exact=False)
    return best


def _canonical_tokens(code: str) -> list[str]:
    """Tokens of `code`, every identifier that is not a keyword or builtin as `ID`; for code
    that does not tokenize to the end, the tokens before the error."""
    tokens: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type not in _KEPT_TOKENS:
                continue
            text = token.string
            is_name = token.type == tokenize.NAME
            if is_name and not keyword.iskeyword(text) and not hasattr(builtins, text):
                text = "ID"
            tokens.append(text)
    except (tokenize.TokenError, SyntaxError):  # unclosed brackets, bad dedents
        pass
    return tokens


def _jaccard(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 1.0
