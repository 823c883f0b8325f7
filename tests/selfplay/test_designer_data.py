"""Designer warm-start data: valid grounded sources within the token budget, clean hints,
prompts exactly as the loop builds them, diversity within each mechanic, determinism."""

from __future__ import annotations

import ast
import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest

from spade.corpus import Corpus, CorpusOptions, Document
from spade.envs import RemoteEnv, validate_source
from spade.envs.scaffold import assemble
from spade.selfplay.designer import (
    SCAFFOLD_CONTRACT,
    designer_messages,
    extract_code,
    extract_env,
    repair_messages,
)
from spade.selfplay.diversity import DEFAULT_THRESHOLD, similarity
from spade.selfplay.hints import check_hint, hint_messages, secret_values
from spade.selfplay.memory import cold_start_envs, excerpt
from spade.selfplay.warmup.content import extract
from spade.selfplay.warmup.designer_data import (
    BuildStats,
    DesignerDataConfig,
    DesignerExample,
    build_designer_data,
    reply_for,
    write_jsonl,
)
from spade.selfplay.warmup.mechanics import MECHANICS, Mechanic, Target
from spade.selfplay.warmup.repairs import BREAKS, reply_failure
from spade.suites import load_suite

SEED_ENVS = Path(__file__).resolve().parents[2] / "envs_snapshots/spade-seed/1.0.0/envs"

# Stand-ins for the shared corpus's three kinds of documents (a textbook section with
# numbers and sentences, a command page, a country profile), so the tests need no data dir.
DOCUMENTS = [
    Document(
        "astro/moon",
        "Astronomy: The Lunar Surface",
        "If you look at the Moon through a telescope, you can see that it is covered by impact "
        "craters of all sizes. The dark areas are called maria after the Latin word for seas. "
        "Among the most prominent craters are those named for Plato, Copernicus and Tycho. "
        "The maria cover about 17 percent of the surface and formed between 3100 and 3900 "
        "million years ago. Lunar basalt flooded the largest basins long after the impacts. "
        "Mountains rise along the rims of the basins and reach heights of 5000 meters. "
        "Astronauts returned 382 kilograms of rocks and soil from six landing sites. "
        "The regolith is a layer of crushed rock that covers the whole surface.",
        "test",
        "CC-BY-4.0",
    ),
    Document(
        "tldr/umask",
        "umask (common command)",
        "# umask\n\n> Manage the read, write and execute permissions that are masked out for "
        "newly created files by the user.\n\n- Display the current mask in octal notation:\n\n"
        "`umask`\n\n- Display the current mask in symbolic mode:\n\n`umask -S`\n\n- Change the "
        "mask symbolically to allow read permission for all users, leaving the other bits "
        "unchanged, so that shells and scripts create readable files for the group owner.\n\n"
        "- Set the mask to restrict no permissions for the owner and all permissions for others. "
        "A typical default mask is 022 on Linux systems and 077 on hardened servers.",
        "test",
        "CC-BY-4.0",
    ),
    Document(
        "factbook/belize",
        "Belize",
        "Belize was the site of several Mayan city states until their decline at the end of the "
        "first millennium. The British and Spanish disputed the region in the 17th and 18th "
        "centuries; it formally became the colony of British Honduras in 1862. Territorial "
        "disputes between the kingdom and Guatemala delayed the independence of Belize until "
        "1981. Guatemala refused to recognize the new nation until 1992. Tourism has become the "
        "mainstay of the economy. The country borders the Caribbean Sea between Guatemala and "
        "Mexico. Its total area is 22966 square kilometers with 386 kilometers of coastline. "
        "Coastal lowlands rise to low mountains in the south.",
        "test",
        "CC0",
    ),
]


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    # The loop's truncation (`corpus.max_words`), short enough to cut the first document.
    return Corpus("test", DOCUMENTS, CorpusOptions(min_words=50, max_words=90))


@pytest.fixture(scope="module")
def count_tokens(smollm2_tokenizer: Any) -> Any:
    return lambda text: len(smollm2_tokenizer(text, add_special_tokens=False)["input_ids"])


@pytest.fixture(scope="module")
def built(corpus: Corpus, count_tokens: Any) -> tuple[list[DesignerExample], BuildStats]:
    stats = BuildStats()
    examples = build_designer_data(corpus, 14, random.Random(7), count_tokens=count_tokens,
                                   stats=stats)  # fmt: skip
    return examples, stats


def _drafts(mechanic: Mechanic, count: int, seed: int) -> list[tuple[str, Target]]:
    """`count` sources of a mechanic for the test documents that fit it, targets varied."""
    rng = random.Random(seed)
    contents = [extract(d.id, d.title, d.text) for d in DOCUMENTS]
    contents = [content for content in contents if mechanic.fits(content)]
    assert contents, f"no test document fits {mechanic.name}"
    drafts = []
    for index in range(count):
        target = Target(rng.choice(mechanic.kinds), rng.choice(mechanic.skills),
                        ("easy", "medium", "hard")[index % 3])  # fmt: skip
        drafts.append((mechanic.build(rng, contents[index % len(contents)], target), target))
    return drafts


def test_there_are_at_least_eight_mechanics_with_every_kind() -> None:
    assert len(MECHANICS) >= 8
    assert {kind for m in MECHANICS for kind in m.kinds} == {"game", "reasoning", "tool_use"}
    assert all(len(m.hints) >= 2 for m in MECHANICS)


def _imports(source: str) -> set[str]:
    tree = ast.parse(source)
    return {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
            for alias in node.names} | {node.module or "" for node in ast.walk(tree)
                                        if isinstance(node, ast.ImportFrom)}  # fmt: skip


@pytest.mark.parametrize("mechanic", MECHANICS, ids=lambda m: m.name)
def test_every_mechanic_writes_valid_sources(mechanic: Mechanic) -> None:
    for source, target in _drafts(mechanic, 2, seed=len(mechanic.name)):
        report = validate_source(source, seeds=3)
        assert report.valid, (mechanic.name, report.failed(), source)
        assert report.metadata == {"kind": target.kind, "skill": target.skill,
                                   "difficulty": target.difficulty}  # fmt: skip
        assert (report.tools is not None) == (target.kind == "tool_use")
        assert report.max_turns is not None  # a stated budget, ended as terminated
        assert _imports(source) <= {"json", "random", "re"}  # standard library only


def test_every_mechanic_can_fit_the_designer_budget(count_tokens: Any) -> None:
    """Drafts vary in length; the builder keeps those within budget, so each mechanic must
    produce some."""
    config = DesignerDataConfig()
    for mechanic in MECHANICS:
        lengths = [(count_tokens(reply_for(source)), target.kind)
                   for source, target in _drafts(mechanic, 12, seed=5)]  # fmt: skip
        fits = [n <= (config.max_tool_reply_tokens if kind == "tool_use"
                      else config.max_reply_tokens) for n, kind in lengths]  # fmt: skip
        assert any(fits), (mechanic.name, lengths)
        assert max(n for n, _ in lengths) <= 540, (mechanic.name, lengths)


def test_running_out_of_turns_terminates_with_partial_credit() -> None:
    for mechanic in MECHANICS:
        source, _ = _drafts(mechanic, 1, seed=3)[0]
        with RemoteEnv(source) as env:
            env.reset(0)
            probe = '{"name": "nothing", "arguments": {}}' if env.spec.tools else "\\boxed{zzz}"
            result = None
            for _ in range(env.spec.max_turns or 30):
                result = env.step(probe)
                if result.terminated or result.truncated:
                    break
            assert result is not None and result.terminated and not result.truncated, mechanic
            assert 0.0 <= result.reward < 1.0


def test_generator_rarely_repeats_itself_within_a_mechanic() -> None:
    """Two drafts of one mechanic are mostly below the near-duplicate threshold."""
    rates = {}
    for mechanic in MECHANICS:
        sources = [source for source, _ in _drafts(mechanic, 8, seed=11)]
        pairs = [similarity(a, b) for a, b in itertools.combinations(sources, 2)]
        rates[mechanic.name] = sum(s >= DEFAULT_THRESHOLD for s in pairs) / len(pairs)
    assert max(rates.values()) <= 0.35, rates
    assert sum(rates.values()) / len(rates) <= 0.15, rates


def test_built_examples_are_valid_diverse_and_fit_the_budget(
    built: tuple[list[DesignerExample], BuildStats], count_tokens: Any
) -> None:
    examples, stats = built
    assert len(examples) == 14
    assert stats.validity >= 0.9 and stats.invalid <= 1, stats.failures
    assert len({e.mechanic for e in examples}) >= 10  # mechanics take turns
    config = DesignerDataConfig()
    for example in examples:
        budget = (config.max_tool_reply_tokens if example.kind == "tool_use"
                  else config.max_reply_tokens)  # fmt: skip
        assert count_tokens(example.reply) <= budget
        assert extract_code(example.reply) == example.source
    for a, b in itertools.combinations(examples, 2):
        if a.mechanic == b.mechanic:
            assert similarity(a.source, b.source) < DEFAULT_THRESHOLD


def test_prompts_are_the_loops_designer_prompts(
    built: tuple[list[DesignerExample], BuildStats], corpus: Corpus
) -> None:
    examples, _ = built
    sources = {e.source for e in examples}
    seeds = {path.read_text() for path in SEED_ENVS.glob("*.py")}
    for example in examples:
        request = example.request
        assert example.messages == designer_messages(request)
        assert example.hint_messages == hint_messages(example.source)
        # The document as the loop shows it: sampled and cut to `corpus.max_words`.
        document = corpus.get(example.document_id).truncated(corpus.options.max_words)
        assert request.document == document.text
        assert (request.kind, request.skill, request.difficulty) == (
            example.kind, example.skill, example.difficulty)  # fmt: skip
        metadata = ast.literal_eval(example.source.split("metadata = ", 1)[1].split("\n")[0])
        assert metadata == {"kind": example.kind, "skill": example.skill,
                            "difficulty": example.difficulty}  # fmt: skip
        for reference in request.references:
            assert reference.excerpt in sources and reference.excerpt != example.source
            assert reference.excerpt not in seeds
            assert similarity(reference.excerpt, example.source) < DEFAULT_THRESHOLD
            if reference.win_rate is not None:
                assert 0.15 <= reference.win_rate <= 0.85
        if request.negative:
            assert request.negative.startswith("Avoid environments like ")
    assert any(e.request.document.endswith("[truncated]") for e in examples)
    assert any(e.request.references for e in examples)
    assert any(not e.request.references for e in examples)


def test_cold_start_prompts_show_train_split_seed_envs_as_the_loop_does(
    corpus: Corpus, count_tokens: Any, built: tuple[list[DesignerExample], BuildStats]
) -> None:
    """With cold_start_share 1, every prompt whose kind has cold-start envs shows them as an
    empty memory's prompt does (excerpts, no stats, no negative line), only train-split envs;
    the sources are the same envs as without (references are drawn after the envs)."""
    cold_start = cold_start_envs("spade-seed@1.1.0")
    heldout = {env.source() for env in load_suite("spade-seed@1.1.0").envs_in("heldout")}
    config = DesignerDataConfig(cold_start_share=1.0, excerpt_chars=800)
    examples = build_designer_data(corpus, 14, random.Random(7), count_tokens=count_tokens,
                                   config=config, cold_start=cold_start)  # fmt: skip
    assert [e.reply for e in examples] == [e.reply for e in built[0]]
    by_kind = {env.kind for env in cold_start}
    shown = 0
    for example in examples:
        request = example.request
        assert example.messages == designer_messages(request)
        if example.kind not in by_kind:
            continue
        assert request.references and request.negative is None
        for reference in request.references:
            assert (reference.win_rate, reference.regret) == (None, None)
            sources = [env.source for env in cold_start if env.kind == example.kind
                       and excerpt(env.source, 800) == reference.excerpt]  # fmt: skip
            assert sources and not heldout.intersection(sources)
            shown += 1
    assert shown >= 8


def test_cold_start_share_needs_cold_start_envs(corpus: Corpus, count_tokens: Any) -> None:
    with pytest.raises(ValueError, match="cold-start envs"):
        build_designer_data(corpus, 1, random.Random(0), count_tokens=count_tokens,
                            config=DesignerDataConfig(cold_start_share=0.5))  # fmt: skip
    with pytest.raises(ValueError, match="cold_start_share must lie in"):
        DesignerDataConfig(cold_start_share=1.5)


def test_repair_examples_are_the_loops_repair_prompts_for_broken_sources(
    corpus: Corpus, count_tokens: Any, built: tuple[list[DesignerExample], BuildStats]
) -> None:
    """With repair_share 1 every example also carries the loop's repair prompt: its own
    request, the source broken one of the ways designs break, and what the loop's checks say
    of that broken reply (a real failure), answered by the unbroken source; the designs and
    their prompts are the same as without."""
    config = DesignerDataConfig(repair_share=1.0)
    examples = build_designer_data(corpus, 14, random.Random(7), count_tokens=count_tokens,
                                   config=config)  # fmt: skip
    assert [(e.reply, e.messages) for e in examples] == [(e.reply, e.messages) for e in built[0]]
    breaks = set()
    for example in examples:
        assert example.repair_messages is not None and example.repair_break in BREAKS
        breaks.add(example.repair_break)
        prompt, broken, feedback = example.repair_messages[:-2], *example.repair_messages[-2:]
        assert prompt == example.messages and broken["role"] == "assistant"
        assert broken["content"] != example.reply
        failure = reply_failure(broken["content"], None, 3)
        assert failure is not None
        assert example.repair_messages == repair_messages(example.request, broken["content"],
                                                          failure)  # fmt: skip
        assert feedback["content"].startswith(f"The environment failed validation: {failure}")
    assert len(breaks) >= 2
    with pytest.raises(ValueError, match="repair_share must lie in"):
        DesignerDataConfig(repair_share=-0.1)


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_each_break_fails_the_checks_the_way_designs_fail(
    name: str, built: tuple[list[DesignerExample], BuildStats]
) -> None:
    expected = {"cut_off": "syntax_error", "dropped_bracket": "syntax_error",
                "missing_import": "raised: NameError"}  # fmt: skip
    failures = []
    for example in built[0][:6]:
        broken = BREAKS[name](example.reply, random.Random(1))
        if broken is not None:
            failures.append(reply_failure(broken, None, 3) or "valid")
    # Every break fails; a cut that ends on a line boundary can parse and fail later instead.
    assert failures and "valid" not in failures, failures
    assert sum(expected[name] in f for f in failures) >= len(failures) / 2, failures


def test_hints_leak_no_answer_values(built: tuple[list[DesignerExample], BuildStats]) -> None:
    examples, _ = built
    for example in examples[:6]:
        with RemoteEnv(example.source) as env:
            secrets, public = secret_values(env, range(3))
        assert check_hint(example.hint_reply, secrets, public).ok, example.hint_reply


def test_same_rng_same_examples(corpus: Corpus, count_tokens: Any, tmp_path: Path) -> None:
    first, second = (build_designer_data(corpus, 4, random.Random(3), count_tokens=count_tokens)
                     for _ in range(2))  # fmt: skip
    assert first == second
    path = write_jsonl(tmp_path / "designer.jsonl", first)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [row["reply"] for row in rows] == [e.reply for e in first]
    assert rows[0]["messages"] == first[0].messages and "request" in rows[0]


def test_content_comes_from_the_document() -> None:
    content = extract("factbook/belize", "Belize", DOCUMENTS[2].text)
    assert content.topic == "Belize"
    assert {1862, 1981, 1992, 22966}.issubset(content.numbers)
    assert "Guatemala" in content.names and "tourism" not in content.names
    assert "disputes" in content.terms and "the" not in content.terms
    assert all(6 <= len(s.split()) <= 18 for s in content.sentences)
    assert all(len(item) <= 8 for item in content.items(10))


# --- the text-env scaffold ---------------------------------------------------------------------

KIT_MECHANICS = [m for m in MECHANICS if m.build_kit is not None]


def test_every_text_mechanic_has_a_scaffolded_design() -> None:
    text = {m.name for m in MECHANICS if "tool_use" not in m.kinds}
    assert {m.name for m in KIT_MECHANICS} == text and len(text) >= 8


@pytest.mark.parametrize("mechanic", KIT_MECHANICS, ids=lambda m: m.name)
def test_scaffolded_designs_are_valid_shorter_and_varied(
    mechanic: Mechanic, count_tokens: Any
) -> None:
    """On the scaffold each mechanic's design is a valid env (the real validator, assembled
    as the loop assembles it), shorter than its complete file, not a near-duplicate of its
    siblings, and it ends at its stated budget as the scaffold says."""
    rng = random.Random(len(mechanic.name))
    contents = [c for c in (extract(d.id, d.title, d.text) for d in DOCUMENTS) if mechanic.fits(c)]
    designs, full = [], []
    for index in range(6):
        target = Target(rng.choice(mechanic.kinds), rng.choice(mechanic.skills),
                        ("easy", "medium", "hard")[index % 3])  # fmt: skip
        content = contents[index % len(contents)]
        assert mechanic.build_kit is not None
        design = mechanic.build_kit(random.Random(index), content, target)
        full.append(mechanic.build(random.Random(index), content, target))
        assert "class TextScaffold" not in design and _imports(design) <= {"json"}
        report = validate_source(assemble(design, "text"), seeds=3)
        assert report.valid, (mechanic.name, report.failed(), design)
        assert report.metadata == {"kind": target.kind, "skill": target.skill,
                                   "difficulty": target.difficulty}  # fmt: skip
        designs.append(design)
    tokens = [count_tokens(reply_for(d)) for d in designs]
    assert sum(tokens) < 0.85 * sum(count_tokens(reply_for(f)) for f in full), tokens
    pairs = [similarity(a, b) for a, b in itertools.combinations(designs, 2)]
    assert sum(s >= DEFAULT_THRESHOLD for s in pairs) <= 0.35 * len(pairs), pairs


def test_scaffolded_examples_are_the_loops_scaffolded_prompts(
    corpus: Corpus, count_tokens: Any
) -> None:
    config = DesignerDataConfig(scaffold="text", reference_counts=(1,), reference_share=0.5)
    examples = build_designer_data(corpus, 10, random.Random(5), count_tokens=count_tokens,
                                   config=config)  # fmt: skip
    assert {e.kind for e in examples} <= {"game", "reasoning"}
    assert len({e.mechanic for e in examples}) >= 8
    for example in examples:
        assert example.request.scaffold == "text"
        assert example.messages == designer_messages(example.request)
        assert SCAFFOLD_CONTRACT in example.messages[-1]["content"]
        assert extract_env(example.reply, "text") == assemble(example.source, "text")
        for reference in example.request.references:
            assert "class TextScaffold" not in reference.excerpt
    with pytest.raises(ValueError, match="scaffold 'text'"):
        DesignerDataConfig(scaffold="text", cold_start_share=0.5)
