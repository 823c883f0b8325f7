"""One designer step: prompts → env sources → sandbox checks (with repairs) → hints.

Every completion the designer wrote becomes a `Candidate`, valid or not, so its reward can
be credited (or withheld) in the update.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spade.corpus import Corpus
from spade.envs.checks import ValidationReport, validate_source
from spade.envs.remote import RemoteEnv
from spade.models.policy import Completion, Message, SamplingParams
from spade.rollout import GenRequest, Responder
from spade.sandbox import SandboxConfig, SandboxUnavailable
from spade.selfplay.config import ConfigError, TrainConfig
from spade.selfplay.designer import (
    DesignRequest,
    Reference,
    code_problem,
    designer_messages,
    extract_code,
    extract_env,
    failure_text,
    repair_messages,
)
from spade.selfplay.diversity import find_near_duplicate
from spade.selfplay.hints import check_hint, clean_hint, hint_messages, secret_values
from spade.selfplay.memory import ColdStartEnv, EnvMemory, MemorySampling, sample_context


@dataclass
class Candidate:
    """One designer completion and what became of it."""

    group: str
    request: DesignRequest
    prompt: list[Message]
    completion: Completion
    """The designer's reply as sampled (token ids and logprobs: the designer's sample)."""
    code: str | None = None
    report: ValidationReport | None = None
    failure: str | None = None
    hint: str | None = None
    hint_prompt: list[Message] = field(default_factory=list)
    hint_reply: str | None = None
    attempts: int = 1
    first: tuple[str, str | None] | None = None
    """After a repair: the first reply and why it failed (the fields above are the last
    attempt's), so a probe can tell the designer's own failures from its repairs'."""

    @property
    def reply(self) -> str:
        return self.completion.text

    @property
    def valid(self) -> bool:
        return self.failure is None and self.code is not None and self.hint is not None


@dataclass
class DesignTimes:
    generation: float = 0.0
    validation: float = 0.0


def design_requests(
    config: TrainConfig,
    rng: random.Random,
    corpus: Corpus | None,
    memory: EnvMemory,
    cold_start: Sequence[ColdStartEnv],
) -> list[DesignRequest]:
    requests = []
    sampling = MemorySampling(
        references=config.memory.references, excerpt_chars=config.memory.excerpt_chars
    )
    count, kinds = config.designer.designs_per_iteration, config.designer.kinds
    planned = balanced_kinds(kinds, count, rng) if config.designer.balanced_kinds else None
    for index in range(count):
        # Independent draws interleave with the document draws, as runs before the option did.
        kind = planned[index] if planned is not None else rng.choice(kinds)
        document_id, document = "none", ""
        if corpus is not None and not config.no_corpus:
            doc = corpus.sample(rng)
            document_id, document = doc.id, doc.text
        references: tuple[Reference, ...] = ()
        negative = None
        if not config.no_memory:
            # Cold-start references are seed-suite files: a scaffolded designer is shown none
            # of them (its references are scaffolded designs, once its memory holds some).
            shown = () if config.designer.scaffold == "text" else cold_start
            context = sample_context(memory, rng, shown, kind=kind, sampling=sampling)
            references = tuple(
                Reference(r.excerpt, r.win_rate, r.regret) for r in context.references
            )
            negative = context.negative.line() if context.negative else None
        requests.append(
            DesignRequest(
                document_id,
                document,
                rng.choice(config.designer.skills),
                rng.choice(config.designer.difficulties),
                kind,
                references,
                negative,
                config.designer.scaffold,
            )
        )
    return requests


def balanced_kinds(kinds: Sequence[str], count: int, rng: random.Random) -> list[str]:
    """`count` request kinds, each kind once in every `len(kinds)` requests (in a shuffled
    order), not drawn independently: kinds differ in how often the designer gets them right,
    and independent draws gave a measured run three iterations of one kind only (24 designs,
    none valid, no designer gradient)."""
    drawn: list[str] = []
    while len(drawn) < count:
        drawn += rng.sample(list(kinds), len(kinds))
    return drawn[:count]


def designer_sampling(config: TrainConfig, seed: int) -> SamplingParams:
    """The designer's sampling: logprobs kept, for the rollout-vs-learner mismatch."""
    return SamplingParams(
        max_new_tokens=config.designer.max_gen_toks,
        temperature=config.designer.temperature,
        seed=seed,
        logprobs=True,
    )


def generate_candidates(
    requests: Sequence[DesignRequest],
    respond: Responder,
    config: TrainConfig,
    seed: int,
    sandbox: SandboxConfig,
    memory: EnvMemory,
    times: DesignTimes,
    known: Sequence[tuple[str, str]] = (),
) -> list[Candidate]:
    """Designer completions for every request (a group of `group_size` each), checked in
    the sandbox, with up to `repair_attempts` repairs per failed candidate. A design that
    repeats (near-duplicates) a memory env, one accepted earlier in this batch, or one of the
    `known` (name, source) envs (e.g. the warm-start data) is rejected: it is not a design."""
    sampling = designer_sampling(config, seed)
    prompts = [designer_messages(r) for r in requests]
    gen_requests = [
        GenRequest("designer", f"design/{i}", tuple(p), sampling, n=config.designer.group_size)
        for i, p in enumerate(prompts)
    ]
    started = time.perf_counter()
    replies = respond(gen_requests)
    times.generation += time.perf_counter() - started
    candidates = [
        Candidate(f"design/{i}", request, prompt, reply)
        for i, (request, prompt, group) in enumerate(zip(requests, prompts, replies, strict=True))
        for reply in group
    ]
    accepted = [*known, *memory.sources()]
    for candidate in candidates:
        _check(candidate, config, sandbox, accepted, times)
    for attempt in range(config.designer.repair_attempts):
        failed = [c for c in candidates if c.failure is not None]
        if not failed:
            break
        _repair(failed, respond, config, seed + 1000 * (attempt + 1), sandbox, accepted, times)
    return candidates


def _repair(
    failed: list[Candidate],
    respond: Responder,
    config: TrainConfig,
    seed: int,
    sandbox: SandboxConfig,
    accepted: list[tuple[str, str]],
    times: DesignTimes,
) -> None:
    sampling = designer_sampling(config, seed)
    prompts = [repair_messages(c.request, c.reply, c.failure or "") for c in failed]
    repairs = [
        GenRequest("designer", f"{c.group}/repair", tuple(p), sampling)
        for c, p in zip(failed, prompts, strict=True)
    ]
    started = time.perf_counter()
    replies = respond(repairs)
    times.generation += time.perf_counter() - started
    for candidate, prompt, reply in zip(failed, prompts, replies, strict=True):
        if candidate.first is None:
            candidate.first = (candidate.reply, candidate.failure)
        candidate.prompt, candidate.completion = prompt, reply[0]
        candidate.attempts += 1
        candidate.code = candidate.report = candidate.failure = None
        _check(candidate, config, sandbox, accepted, times)


def _check(
    candidate: Candidate,
    config: TrainConfig,
    sandbox: SandboxConfig,
    accepted: list[tuple[str, str]],
    times: DesignTimes,
) -> None:
    """Extract, dedupe (against memory and this batch's accepted envs), validate."""
    started = time.perf_counter()
    try:
        candidate.code = extract_env(candidate.reply, candidate.request.scaffold)
        if candidate.code is None:
            candidate.failure = code_problem(candidate.reply)
            return
        duplicate = find_near_duplicate(candidate.code, accepted)
        if duplicate is not None:
            candidate.failure = f"near_duplicate: {duplicate.reason()}"
            return
        report = validate_source(
            candidate.code, "env.py", seeds=config.check_seeds, config=sandbox, deadline_s=30.0
        )
        candidate.report = report
        if not report.valid:
            candidate.failure = failure_text(report)
        else:
            accepted.append((candidate.group, candidate.code))
    finally:
        times.validation += time.perf_counter() - started


def write_hints(
    candidates: Sequence[Candidate],
    respond: Responder,
    config: TrainConfig,
    seed: int,
    sandbox: SandboxConfig,
    times: DesignTimes,
) -> None:
    """A leak-free hint for every checked candidate; no clean hint makes it invalid."""
    pending = [c for c in candidates if c.failure is None and c.code is not None]
    leaks = {id(c): _secrets(c, sandbox, config.check_seeds) for c in pending}
    for attempt in range(config.designer.hint_attempts):
        if not pending:
            return
        sampling = SamplingParams(
            max_new_tokens=config.designer.hint_max_gen_toks,
            temperature=config.designer.temperature,
            seed=seed + attempt,
        )
        prompts = [hint_messages(c.code or "") for c in pending]
        asked = [
            GenRequest("hint", f"{c.group}/hint", tuple(p), sampling)
            for c, p in zip(pending, prompts, strict=True)
        ]
        started = time.perf_counter()
        replies = respond(asked)
        times.generation += time.perf_counter() - started
        still = []
        for candidate, prompt, reply in zip(pending, prompts, replies, strict=True):
            hint = clean_hint(reply[0].text)
            secrets = leaks[id(candidate)]
            report = check_hint(hint, *secrets) if secrets else None
            candidate.hint_prompt, candidate.hint_reply = prompt, reply[0].text
            if hint and secrets is not None and report is not None and report.ok:
                candidate.hint = hint
            else:
                still.append(candidate)
        pending = still
    for candidate in pending:
        candidate.failure = "no hint without leaked answer values"


def _secrets(
    candidate: Candidate, sandbox: SandboxConfig, seeds: int
) -> tuple[set[str], set[str]] | None:
    try:
        with RemoteEnv(candidate.code or "", config=sandbox) as env:
            return secret_values(env, range(seeds))
    except SandboxUnavailable:  # no sandbox at all: not a verdict on this env
        raise
    except Exception:
        return None


def known_designs(paths: str | Sequence[str] | None) -> list[tuple[str, str]]:
    """(name, source) of the envs a design must not repeat: the `reply` code of every record
    of a designer JSONL, or every .py file of a folder; several of either as a list (e.g. the
    data of a warm start and of the one continued from it)."""
    if paths is None:
        return []
    known: list[tuple[str, str]] = []
    for path in [paths] if isinstance(paths, str) else paths:
        known += _known_designs(Path(path))
    return known


def _known_designs(where: Path) -> list[tuple[str, str]]:
    try:
        if where.is_dir():
            return [
                (f"known:{p.name}", p.read_text(encoding="utf-8"))
                for p in sorted(where.glob("*.py"))
            ]
        known = []
        for number, line in enumerate(where.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                code = extract_code(json.loads(line)["reply"])
                if code is not None:
                    known.append((f"known:{where}:{number}", code))
        return known
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"designer.known_designs {where}: cannot read ({exc})") from None
