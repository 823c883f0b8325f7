"""Warm-start data for the Environment Designer: prompts exactly as the loop builds them,
replies that are short valid env sources grounded in the prompt's document, and hints.

A 135M model writes no valid env out of the box: it does not know the format. The data
teaches the format and a repertoire of mechanics (`spade.selfplay.warmup.mechanics`) to
recombine with a document's content, not files to memorise: every source is generated for
its own document and target, structurally varied, checked by the real validator
(`validate_source`, in the sandbox), and kept only when it fits the designer's generation
budget and is not a near-duplicate of a source already kept. Memory references in the
prompts show other generated envs (never the seed suite's), with made-up but plausible win
rates and regrets, in the loop's format.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from tqdm import tqdm

from spade.atomic import write_atomic
from spade.corpus import Corpus
from spade.envs.checks import validate_source
from spade.envs.remote import EnvLoadError, RemoteEnv
from spade.envs.scaffold import Scaffold, assemble
from spade.sandbox import SandboxConfig, SandboxError
from spade.selfplay.config import DesignerConfig
from spade.selfplay.designer import DesignRequest, Reference, designer_messages
from spade.selfplay.diversity import DEFAULT_THRESHOLD, find_near_duplicate
from spade.selfplay.hints import check_hint, hint_messages, secret_values
from spade.selfplay.memory import ColdStartEnv, NegativeExample, describe, excerpt
from spade.selfplay.warmup.content import Content, extract
from spade.selfplay.warmup.mechanics import MECHANICS, Mechanic, Target
from spade.selfplay.warmup.repairs import repair_example

FENCE_OPEN, FENCE_CLOSE = "```python\n", "```"
_DEFAULTS = DesignerConfig()


@dataclass(frozen=True)
class DesignerDataConfig:
    """How designer warm-start examples are made."""

    max_reply_tokens: int = 460
    """Most tokens a text env's reply (fences included) may take; the loop's designer budget
    is `designer.max_gen_toks` (512 by default), so this leaves room to spare."""
    max_tool_reply_tokens: int = 490
    """The same for tool-use envs: JSON schemas and call parsing make the shortest complete
    tool env ~460 SmolLM2 tokens (a token per digit, ~10 per code line)."""
    max_words: int | None = None
    """Cut documents further to this many words; None: as the loop does, only to the
    corpus's own `CorpusOptions.max_words` (open it with the run's `corpus` settings)."""
    check_seeds: int = 3
    """Seeds of the validator run and of the hint leak check (the loop's `check_seeds`)."""
    reference_share: float = 0.6
    """Share of prompts that show memory references (1 or 2 other generated envs)."""
    reference_counts: tuple[int, ...] = (1, 2, 2)
    """How many references such a prompt shows, drawn uniformly from this tuple (the loop
    shows `memory.references`, 2 by default; a 2-reference prompt with a 300-word document
    is ~2,300 tokens with its reply, a prompt without references ~1,300)."""
    unmeasured_share: float = 0.25
    """Of the references, the share shown as cold-start 'reference examples' (no stats)."""
    cold_start_share: float = 0.0
    """Share of prompts whose references are cold-start envs (the train split of the warm
    start's `suite`, which a run's `memory.cold_start_suite` names too; of the reply's kind,
    excerpted, no stats, no negative line), as the loop shows them while its memory holds no
    in-band env of that kind: every prompt of a run's first iterations. Needs the
    `cold_start` envs given to `build_designer_data`."""
    negative_share: float = 0.3
    """Share of prompts with a negative line (an env outside the win-rate band)."""
    repair_share: float = 0.0
    """Share of examples that also give a repair example: the loop's repair prompt for the
    source broken as the designer's replies break (`spade.selfplay.warmup.repairs`),
    answered by the source."""
    excerpt_chars: int = 2000
    """A reference's code excerpt length, as `MemorySampling.excerpt_chars`."""
    difficulties: tuple[str, ...] = tuple(_DEFAULTS.difficulties)
    scaffold: Scaffold = "none"
    """"text": replies are designs on the text-env scaffold (`spade.envs.scaffold`), from the
    mechanics that have one (text kinds only), for a run with `designer.scaffold: text`."""
    draws: int = 40
    """Generator draws per example to find a source within budget and not a near-duplicate."""
    document_tries: int = 50
    """Documents tried per example to find one that offers what the mechanic needs."""

    def __post_init__(self) -> None:
        for name in (
            "reference_share",
            "unmeasured_share",
            "cold_start_share",
            "negative_share",
            "repair_share",
        ):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], not {getattr(self, name)}")
        if self.scaffold == "text" and self.cold_start_share > 0:
            raise ValueError(
                "cold_start_share must be 0 with scaffold 'text': a scaffolded "
                "designer is shown no cold-start (seed-suite) references"
            )


@dataclass(frozen=True)
class DesignerExample:
    """One designer SFT example (the prompt, the env reply) and its hint example."""

    messages: list[dict[str, str]]
    reply: str
    hint_messages: list[dict[str, str]]
    hint_reply: str
    mechanic: str
    document_id: str
    kind: str
    skill: str
    difficulty: str
    request: DesignRequest
    """What `messages` was built from: `messages == designer_messages(request)`."""
    repair_messages: list[dict[str, str]] | None = None
    """The loop's repair prompt for this source broken one way (`repair_break`); `reply`
    answers it too. None: no repair example."""
    repair_break: str | None = None

    @property
    def source(self) -> str:
        """The env source inside the reply."""
        return self.reply[len(FENCE_OPEN) : -len(FENCE_CLOSE)]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class BuildStats:
    """What happened while building: how often drafts were dropped, and why."""

    drafts: int = 0
    over_budget: int = 0
    near_duplicate: int = 0
    validated: int = 0
    invalid: int = 0
    no_clean_hint: int = 0
    failures: list[str] = field(default_factory=list)
    """`mechanic: first failed check` of every invalid source."""

    @property
    def validity(self) -> float:
        return (self.validated - self.invalid) / self.validated if self.validated else 0.0


@dataclass(frozen=True)
class _Env:
    mechanic: Mechanic
    target: Target
    document_id: str
    document: str
    source: str
    hint: str


def build_designer_data(
    corpus: Corpus,
    n: int,
    rng: random.Random,
    sandbox: SandboxConfig | None = None,
    *,
    config: DesignerDataConfig | None = None,
    count_tokens: Callable[[str], int] | None = None,
    stats: BuildStats | None = None,
    progress: bool = False,
    cold_start: Sequence[ColdStartEnv] = (),
) -> list[DesignerExample]:
    """`n` designer examples from `corpus`, deterministic for a fixed `rng` state.

    Mechanics take turns (a shuffled cycle), each example's kind and skill are drawn from
    what its mechanic teaches, and every source passes `validate_source` in `sandbox`.
    `count_tokens` measures a reply (default: the SmolLM2 tokenizer). `cold_start`: the
    envs `config.cold_start_share` of the prompts show as references (`cold_start_envs`:
    a suite's train split, never a held-out env).
    """
    config = config or DesignerDataConfig()
    if config.cold_start_share > 0 and not cold_start:
        raise ValueError("designer_data.cold_start_share > 0 needs cold-start envs to show")
    count_tokens = count_tokens or smollm2_token_counter()
    stats = stats if stats is not None else BuildStats()
    envs: list[_Env] = []
    mechanics = [m for m in MECHANICS if config.scaffold == "none" or m.build_kit is not None]
    order: list[Mechanic] = []
    misses = 0  # attempts in a row that kept nothing
    bar = tqdm(total=n, desc="designer data", unit="env", disable=not progress)
    while len(envs) < n:
        if not order:
            order = rng.sample(mechanics, len(mechanics))
        env = _make_env(order.pop(), corpus, rng, sandbox, config, count_tokens, envs, stats)
        misses = 0 if env is not None else misses + 1
        if misses > 4 * len(mechanics):
            bar.close()
            raise RuntimeError(
                f"designer data: no env kept in {misses} attempts in a row (kept {len(envs)} of "
                f"{n}); last invalid sources: {stats.failures[-3:] or 'none'}; check the sandbox "
                f"and that corpus {corpus.name!r} has documents with words and numbers"
            )
        if env is not None:
            envs.append(env)
            bar.update()
    bar.close()
    examples = [
        _example(env, envs, index, rng, config, cold_start) for index, env in enumerate(envs)
    ]
    if config.repair_share == 0:
        return examples  # no draw: examples built without repairs stay as they were
    return [
        _with_repair(e, rng, sandbox, config) if rng.random() < config.repair_share else e
        for e in examples
    ]


def write_jsonl(path: str | Path, examples: Sequence[DesignerExample]) -> Path:
    """One JSON object per example, written atomically."""
    lines = (json.dumps(example.to_json(), ensure_ascii=False) + "\n" for example in examples)
    write_atomic(path, "".join(lines))
    return Path(path)


def smollm2_token_counter() -> Callable[[str], int]:
    """Token counts with the embedded model's tokenizer (the designer's budget unit)."""
    from transformers import AutoTokenizer

    from spade.models import builtin_model_dir

    tokenizer = AutoTokenizer.from_pretrained(builtin_model_dir("smollm2-135m"))
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def reply_for(source: str) -> str:
    return f"{FENCE_OPEN}{source}{FENCE_CLOSE}"


# --- one env --------------------------------------------------------------------------------


def _make_env(
    mechanic: Mechanic,
    corpus: Corpus,
    rng: random.Random,
    sandbox: SandboxConfig | None,
    config: DesignerDataConfig,
    count_tokens: Callable[[str], int],
    kept: list[_Env],
    stats: BuildStats,
) -> _Env | None:
    """A validated env of `mechanic` with a clean hint, or None (the caller moves on)."""
    found = _document(mechanic, corpus, rng, config)
    if found is None:
        return None
    document_id, document, content = found
    target = Target(
        rng.choice(mechanic.kinds), rng.choice(mechanic.skills), rng.choice(config.difficulties)
    )
    budget = config.max_tool_reply_tokens if target.kind == "tool_use" else config.max_reply_tokens
    same = [(str(i), env.source) for i, env in enumerate(kept) if env.mechanic is mechanic]
    source = None
    for _ in range(config.draws):
        stats.drafts += 1
        build = mechanic.build_kit if config.scaffold == "text" else mechanic.build
        assert build is not None  # mechanics without a scaffolded build are left out above
        draft = build(random.Random(rng.getrandbits(64)), content, target)
        if count_tokens(reply_for(draft)) > budget:
            stats.over_budget += 1
        elif find_near_duplicate(draft, same, DEFAULT_THRESHOLD) is not None:
            stats.near_duplicate += 1
        else:
            source = draft
            break
    if source is None:
        return None
    stats.validated += 1
    env_source = assemble(source, config.scaffold)  # what the loop would validate and play
    report = validate_source(
        env_source, "env.py", seeds=config.check_seeds, config=sandbox, deadline_s=30.0
    )
    if not report.valid:
        stats.invalid += 1
        stats.failures.append(f"{mechanic.name}: {report.failed()[0].name}")
        return None
    hint = _clean_hint(mechanic, env_source, rng, sandbox, config.check_seeds)
    if hint is None:
        stats.no_clean_hint += 1
        return None
    return _Env(mechanic, target, document_id, document, source, hint)


def _document(
    mechanic: Mechanic, corpus: Corpus, rng: random.Random, config: DesignerDataConfig
) -> tuple[str, str, Content] | None:
    """A document as the loop shows it (`corpus.sample`) that fits `mechanic`."""
    for _ in range(config.document_tries):
        document = corpus.sample(rng).truncated(config.max_words)  # None: unchanged
        content = extract(document.id, document.title, document.text)
        if mechanic.fits(content):
            return document.id, document.text, content
    return None


def _clean_hint(
    mechanic: Mechanic,
    source: str,
    rng: random.Random,
    sandbox: SandboxConfig | None,
    seeds: int,
) -> str | None:
    """The first of the mechanic's hints (in a random order) that leaks no answer value."""
    try:
        with RemoteEnv(source, config=sandbox) as env:
            secrets, public = secret_values(env, range(seeds))
    except (SandboxError, EnvLoadError):
        return None
    for hint in rng.sample(mechanic.hints, len(mechanic.hints)):
        if check_hint(hint, secrets, public).ok:
            return hint
    return None


# --- prompts --------------------------------------------------------------------------------


def _example(
    env: _Env,
    envs: list[_Env],
    index: int,
    rng: random.Random,
    config: DesignerDataConfig,
    cold_start: Sequence[ColdStartEnv],
) -> DesignerExample:
    references, negative = _cold_start_memory(env, rng, config, cold_start) or _memory(
        env, envs, index, rng, config
    )
    target = env.target
    request = DesignRequest(
        env.document_id,
        env.document,
        target.skill,
        target.difficulty,
        target.kind,
        references,
        negative,
        config.scaffold,
    )
    return DesignerExample(
        messages=designer_messages(request),
        reply=reply_for(env.source),
        hint_messages=hint_messages(env.source),
        hint_reply=env.hint,
        mechanic=env.mechanic.name,
        document_id=env.document_id,
        kind=env.target.kind,
        skill=env.target.skill,
        difficulty=env.target.difficulty,
        request=request,
    )


def _with_repair(
    example: DesignerExample,
    rng: random.Random,
    sandbox: SandboxConfig | None,
    config: DesignerDataConfig,
) -> DesignerExample:
    found = repair_example(example.request, example.reply, rng, sandbox, config.check_seeds)
    if found is None:
        return example
    messages, broken = found
    return replace(example, repair_messages=messages, repair_break=broken)


def _cold_start_memory(
    env: _Env, rng: random.Random, config: DesignerDataConfig, cold_start: Sequence[ColdStartEnv]
) -> tuple[tuple[Reference, ...], None] | None:
    """A cold-start prompt's references (`config.cold_start_share` of the prompts; None for
    the others): cold-start envs of the reply's kind without stats, as `sample_context` fills
    a prompt from an empty memory, and no negative line (an empty memory has none). An env
    the reply would repeat is never shown."""
    if config.cold_start_share == 0:
        return None  # no draw: examples built without cold-start envs stay as they were
    pool = [
        c
        for c in cold_start
        if c.kind == env.target.kind and find_near_duplicate(env.source, [(c.id, c.source)]) is None
    ]
    if not pool or rng.random() >= config.cold_start_share:
        return None
    chosen = rng.sample(pool, min(len(pool), rng.choice(config.reference_counts)))
    shown = tuple(Reference(excerpt(c.source, config.excerpt_chars), None, None) for c in chosen)
    return shown, None


def _memory(
    env: _Env, envs: list[_Env], index: int, rng: random.Random, config: DesignerDataConfig
) -> tuple[tuple[Reference, ...], str | None]:
    """References and a negative line drawn from the other envs of the same kind (the loop
    filters memory by kind); a reference that the reply would repeat is never shown."""
    others = [
        other for i, other in enumerate(envs) if i != index and other.target.kind == env.target.kind
    ]
    references: list[Reference] = []
    if others and rng.random() < config.reference_share:
        distinct = [
            o for o in others if find_near_duplicate(env.source, [("ref", o.source)]) is None
        ]
        for other in rng.sample(distinct, min(len(distinct), rng.choice(config.reference_counts))):
            text = excerpt(other.source, config.excerpt_chars)
            if rng.random() < config.unmeasured_share:
                references.append(Reference(text, None, None))
            else:
                win_rate = round(rng.uniform(0.15, 0.85), 2)
                references.append(Reference(text, win_rate, round(rng.uniform(-0.05, 0.45), 2)))
    negative = None
    if others and rng.random() < config.negative_share:
        other = rng.choice(others)
        too_easy = rng.random() < 0.5
        win_rate = round(rng.uniform(0.88, 1.0) if too_easy else rng.uniform(0.0, 0.12), 2)
        name = describe(other.source, other.target.skill)
        reason: Literal["too easy", "too hard"] = "too easy" if too_easy else "too hard"
        negative = NegativeExample("memory", name, reason, win_rate).line()
    return tuple(references), negative
